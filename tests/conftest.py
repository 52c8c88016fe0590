"""Shared fixtures: the project's sources, and throwaway copies of them for tests that break things."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXEMPLAR = "metrics/grpo/clip_ratio/low_mean.yaml"


def copy_sources(dest: Path, metrics: list[str] | None = None) -> Path:
    """A checkout-like folder with the config, locales and the given metric files; with all of them (None), the
    glossary too, which a single metric's copy leaves out."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("atlas.yml", "mkdocs.yml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "locales", dest / "locales")
    if metrics is None:
        shutil.copytree(ROOT / "metrics", dest / "metrics")
        shutil.copytree(ROOT / "glossary", dest / "glossary")
    else:
        for rel in metrics:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    """Sources holding only the exemplar metric, with its references to other metrics removed."""
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    path = root / EXEMPLAR
    text = path.read_text(encoding="utf-8")
    path.write_text("\n".join("related: []" if ln.startswith("related:") else ln for ln in text.splitlines()) + "\n",
                    encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The real sources built once into a temporary site folder (all versions, all languages)."""
    from generator.build import build_site

    return build_site(ROOT, site_dir=tmp_path_factory.mktemp("site") / "site")


@pytest.fixture(scope="session")
def site_url(built_site):
    """The built site served over HTTP on a free loopback port, as `atlas serve` serves it."""
    import threading

    from generator.serve import make_server

    server = make_server(built_site, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# --- headless Debian Chromium (Playwright), for the tests marked `browser` ---------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which("chromium"):
        pytest.fail("Debian chromium is missing: `make setup` installs it (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser, site_url):
    """A page that records every request it makes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.requests = []  # type: ignore[attr-defined]
    pg.on("request", lambda req: pg.requests.append(req.url))
    yield pg
    context.close()
