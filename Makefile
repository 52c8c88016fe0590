# RL Metrics Atlas. `make serve` and `make test` set everything up from nothing.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
ATLAS := $(VENV)/bin/atlas
export NO_MKDOCS_2_WARNING := 1
export HF_HUB_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
APT_PACKAGES := chromium fonts-noto-cjk fonts-noto-core

.PHONY: setup system-deps serve build check test test-fast lint schema clean

setup: $(VENV)/.installed node_modules/.installed system-deps

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian packages for the browser tests and the CJK fonts: installed when run as root, otherwise the command is printed.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	fc-list 2>/dev/null | grep -q "Noto Sans CJK" || missing="$$missing fonts-noto-cjk"; \
	fc-list 2>/dev/null | grep -q "NotoSans-Regular" || missing="$$missing fonts-noto-core"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "missing Debian packages:$$missing. Run:"; \
	    echo "  sudo apt-get update && sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

schema: $(VENV)/.installed
	$(ATLAS) schema -o metrics/schema.json

check: $(VENV)/.installed node_modules/.installed
	$(ATLAS) check

build: $(VENV)/.installed node_modules/.installed
	$(ATLAS) build

serve: setup
	$(ATLAS) serve --addr 127.0.0.1 --port 8000

test: setup
	$(PY) -m pytest -q -n 2 --dist loadgroup

# everything but the browser and real-TRL tests
test-fast: $(VENV)/.installed node_modules/.installed
	$(PY) -m pytest -q -m "not browser and not conformance"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check generator tests benchmarks

clean:
	rm -rf site build .pytest_cache .hypothesis
