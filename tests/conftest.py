"""Shared fixtures: the project's sources read and checked once, the real site built once for the whole session
(every pytest-xdist worker included), throwaway copies of the sources for tests that break things, and headless
Chromium. Nothing here does work at import time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path

import pytest

from .shared import once, session_folder

ROOT = Path(__file__).resolve().parents[1]
EXEMPLAR = "metrics/grpo/clip_ratio/low_mean.yaml"


@cache
def real_sources():
    """The project's own sources, read once per process (for parametrizing tests at collection)."""
    from generator.read.sources import read_sources

    return read_sources(ROOT)


@cache
def real_atlas():
    """The project's own sources, checked once per process (snippets are run by their own tests)."""
    from generator.pipeline import load_atlas

    return load_atlas(ROOT, run_snippets=False, sources=real_sources())


@pytest.fixture(scope="session")
def atlas():
    return real_atlas()


def copy_sources(dest: Path, metrics: list[str] | None = None) -> Path:
    """A checkout-like folder with the config, locales and the given metric files with their trainers' files; with
    all of them (None), the glossary too, which a few metrics' copy leaves out."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("atlas.yml", "mkdocs.yml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "locales", dest / "locales")
    if metrics is None:
        shutil.copytree(ROOT / "metrics", dest / "metrics")
        shutil.copytree(ROOT / "glossary", dest / "glossary")
        return dest
    for rel in metrics:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    _trim_trainers(dest, metrics)
    return dest


def copy_cache(dest: Path) -> None:
    """The project's build cache (KaTeX HTML, snippet results, parsed sources, cheat-sheet PDFs, pages' Markdown
    conversions and the theme's compiled templates, by content) into the checkout-like folder ``dest``: a build of a
    copy then makes only what its changes touch. Warm after `built_site`. The entries are linked, not copied (a
    hundred megabytes): the cache never changes a file in place, it writes a new one and renames it."""
    cache = ROOT / ".cache" / "atlas"
    for name in ("results.json", "parsed.pickle", "sheets", "pages", "templates"):
        if (cache / name).is_file():
            (dest / ".cache" / "atlas").mkdir(parents=True, exist_ok=True)
            _link(cache / name, dest / ".cache" / "atlas" / name)
        elif (cache / name).is_dir():
            shutil.copytree(cache / name, dest / ".cache" / "atlas" / name, dirs_exist_ok=True, copy_function=_link)


def _link(src: Path | str, dst: Path | str) -> None:
    try:
        os.link(src, dst)
    except FileExistsError:  # copied before: the entry may have changed since
        os.unlink(dst)
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def _trim_trainers(dest: Path, metrics: list[str]) -> None:
    """The trainer files of the copied metrics, keeping only what their pages and sheets show (every text of the
    sources must be shown somewhere): the categories of the copied metrics, the strip only with a sheet entry."""
    import yaml

    used: dict[str, set[str]] = {}
    sheet: set[str] = set()
    for rel in metrics:
        data = yaml.load((dest / rel).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        used.setdefault(data["trainer"], set()).add(data["category"])
        if data.get("cheatsheet"):
            sheet.add(data["trainer"])
    for trainer, categories in used.items():
        (dest / "metrics" / trainer / "trainer.yaml").write_text(
            _trimmed_trainer(trainer, frozenset(categories), trainer in sheet), encoding="utf-8")


@cache
def _trimmed_trainer(trainer: str, categories: frozenset[str], strip: bool) -> str:
    import yaml

    data = yaml.load((ROOT / "metrics" / trainer / "trainer.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    data["categories"] = [c for c in data["categories"] if c["id"] in categories]
    if not strip:
        data.pop("strip", None)
    return yaml.dump(data, Dumper=yaml.CSafeDumper, allow_unicode=True, sort_keys=False, width=1000)


@pytest.fixture
def mini_root(tmp_path: Path) -> Path:
    """Sources holding only the exemplar metric, with its references to other metrics removed."""
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    path = root / EXEMPLAR
    text = path.read_text(encoding="utf-8")
    path.write_text("\n".join("related: []" if ln.startswith("related:") else ln for ln in text.splitlines()) + "\n",
                    encoding="utf-8")
    return root


# --- the real site, built once per session in a process of its own, started first -------------------------------

_SITE_PROCESS: list[subprocess.Popen] = []


def _build_site(folder: Path) -> None:
    """The real sources built into ``folder`` by ``tests/site_build.py``; its error, if any, raised here."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.site_build", str(folder)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _SITE_PROCESS.append(proc)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the site build failed (exit code {proc.returncode}): {(err or out).strip()[-3000:]}")


def _needs_site(item: pytest.Item) -> bool:
    return "built_site" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read the real site run last (pytest-xdist hands tests out in this order): the site is built in
    the background meanwhile, and no worker waits for it with other tests still to run."""
    items.sort(key=_needs_site)


@pytest.fixture(scope="session", autouse=True)
def _site_started_first(request, tmp_path_factory):
    """Start building the shared site when the session starts, if a selected test reads it: one process of the
    session (pytest-xdist workers included) builds it, in a thread that waits on it; tests go on meanwhile."""
    if not any(_needs_site(item) for item in request.session.items):
        yield
        return
    session_folder(tmp_path_factory)  # made here, before the thread asks for it

    def start() -> None:
        try:
            once(tmp_path_factory, "site", _build_site)
        except (Exception, pytest.fail.Exception):  # recorded by `once`: the tests that read the site report it
            pass

    threading.Thread(target=start, daemon=True).start()
    yield
    for proc in _SITE_PROCESS:  # the session is over (or was stopped) before the build: it is not needed
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The real sources built once for the whole test session (all lines, all languages)."""
    return once(tmp_path_factory, "site", _build_site)


@pytest.fixture
def site_cache(built_site) -> None:
    """For a test that copies the project's build cache (`copy_cache`): the shared site built first, so that the copy
    holds every sheet's PDF and formula, and the test makes only what its change touches."""


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
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium per test process."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which("chromium"):
        pytest.fail("Debian chromium is missing: `make setup` installs it (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture(scope="session")
def tab_context(browser):
    """The browser context of every test's `page`, which is one tab, kept open: a new tab (a new context or page)
    costs Chromium about 2 s of CPU to start its renderer, navigating an open one about a third of that."""
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture
def page(tab_context, site_url):
    """A page that records every request it makes, starting as a new browser context would: blank, nothing cached
    or stored for the site, the default viewport."""
    pg = tab_context.pages[0] if tab_context.pages else tab_context.new_page()  # closed pages leave the list
    cdp = tab_context.new_cdp_session(pg)
    pg.goto("about:blank")
    cdp.send("Network.clearBrowserCache")
    cdp.send("Storage.clearDataForOrigin", {"origin": site_url, "storageTypes": "all"})
    pg.context.clear_cookies()
    pg.set_viewport_size(VIEWPORT)
    pg.mouse.move(0, 0)
    pg.requests = []  # type: ignore[attr-defined]

    def note(request) -> None:
        pg.requests.append(request.url)  # type: ignore[attr-defined]

    pg.on("request", note)
    yield pg
    pg.remove_listener("request", note)
    cdp.detach()
