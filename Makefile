# RL Metrics Atlas. `make serve` and `make test` set everything up from nothing.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
ATLAS := $(VENV)/bin/atlas
export NO_MKDOCS_2_WARNING := 1
export HF_HUB_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# bytecode is written even where the environment says not to: the tests start about a hundred Python processes
# (pytest-xdist workers, `atlas` runs, snippet runners, examples), each of which would compile the project's modules
# from source again, and each worker would rewrite the asserts of every test module again (half of its collection)
export PYTHONDONTWRITEBYTECODE :=
# chromium: browser tests; fonts: the site and the cheat-sheet PDFs; pango: WeasyPrint; poppler-utils: PDF tests;
# a Java runtime: the Nu HTML checker (npm vnu-jar) of the site gates
APT_PACKAGES := chromium fonts-noto-cjk fonts-noto-core fonts-dejavu-core libpango-1.0-0 libpangoft2-1.0-0 poppler-utils \
	default-jre-headless

.PHONY: setup system-deps conformance-envs serve build pdf check test test-fast fuzz lint schema bench clean

setup: $(VENV)/.installed node_modules/.installed system-deps

$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian packages for the browser tests, the fonts and the PDF engine: installed when run as root, otherwise the
# command is printed.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	fc-list 2>/dev/null | grep -q "Noto Sans CJK" || missing="$$missing fonts-noto-cjk"; \
	fc-list 2>/dev/null | grep -q "NotoSans-Regular" || missing="$$missing fonts-noto-core"; \
	fc-list 2>/dev/null | grep -q "DejaVuSansMono" || missing="$$missing fonts-dejavu-core"; \
	ldconfig -p 2>/dev/null | grep -q "libpango-1.0.so.0" || missing="$$missing libpango-1.0-0"; \
	ldconfig -p 2>/dev/null | grep -q "libpangoft2-1.0.so.0" || missing="$$missing libpangoft2-1.0-0"; \
	command -v pdftoppm >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
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

# one virtualenv per older TRL release under test (tests/conformance/requirements-trl-*.txt), in .cache/atlas/venvs/;
# made here, two at a time, so that the tests only read them (a no-op when they are up to date). The base python3
# runs it: `make test` makes them while it installs .venv/ (pip uses one core)
conformance-envs:
	python3 -m tests.conformance.envs

schema: $(VENV)/.installed
	$(ATLAS) schema -o metrics/schema.json
	$(ATLAS) schema --glossary -o glossary/schema.json
	$(ATLAS) schema --trainer -o metrics/trainer.schema.json
	$(ATLAS) schema --explainer -o metrics/explainer.schema.json

check: $(VENV)/.installed node_modules/.installed
	$(ATLAS) check

build: $(VENV)/.installed node_modules/.installed system-deps
	$(ATLAS) build

# only the one-page cheat-sheets (PDFs and printable pages), into site/
pdf: $(VENV)/.installed node_modules/.installed system-deps
	$(ATLAS) pdf

serve: setup
	$(ATLAS) serve --addr 127.0.0.1 --port 8000

# the set-up steps side by side (.venv/, node packages, Debian packages, the TRL virtualenvs), then every test
test:
	@$(MAKE) --no-print-directory -j4 setup conformance-envs
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=10

# everything but the browser and real-TRL tests
test-fast: $(VENV)/.installed node_modules/.installed system-deps
	$(PY) -m pytest -q -m "not browser and not conformance"

# the source fuzzer at length (`make test` runs 50 examples): FUZZ_EXAMPLES mutated files, snippets run too
FUZZ_EXAMPLES ?= 2000
fuzz: $(VENV)/.installed node_modules/.installed
	ATLAS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) ATLAS_FUZZ_SNIPPETS=1 $(PY) -m pytest -q tests/test_fuzz_sources.py

# every benchmark, and their figures as the table in benchmarks/README.md (BENCH_ARGS=--skip-tests to leave out the
# ~10 min test-suite timing)
bench: setup
	$(PY) benchmarks/run_all.py $(BENCH_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check generator tests benchmarks examples

clean:
	rm -rf site build .pytest_cache .hypothesis
