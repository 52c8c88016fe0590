"""mkdocs' Markdown conversion of a page, kept by content in .cache/atlas/pages/: a page whose Markdown, place and
settings a build has converted before gets its HTML, table of contents, title and anchors back instead of being
converted again (Python-Markdown takes about three quarters of mkdocs' time on our pages). Every line and
language is its own mkdocs run, a rebuild after an edit changes a few pages, and the lines share pages.

What a conversion depends on besides the page's Markdown is part of the key (the page's path and URL, the Markdown
extensions and their settings, the page language, the versions of mkdocs, Markdown and its extensions, this
module) or is checked on use: every link target the conversion looked up must resolve to the same file now, so a
page added, removed or moved elsewhere is converted again. A conversion that logged a warning is never kept, and
links to another page's anchors are handed back to mkdocs, which checks them after every build as before."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import time
import zlib
from pathlib import Path
from typing import Any

from ..cache import key, write_atomic

PAGES = "pages"  # the folder under .cache/atlas/
KEEP_DAYS = 14  # an entry no build has used for this long is removed (`prune`)
_SELF = ""  # in `links`: the page itself (a link to one of its own anchors)


@functools.cache
def _version() -> str:
    packages = ("mkdocs", "markdown", "pymdown-extensions", "mkdocs-material", "mkdocs-static-i18n", "pygments")
    found = [importlib.metadata.version(p) for p in packages]
    return hashlib.sha256(json.dumps(found).encode() + Path(__file__).read_bytes()).hexdigest()


def _answer(file: Any) -> list[Any] | None:
    """What a link to ``file`` turns into: its URL, and whether it is left out of the built site."""
    return None if file is None else [file.url, file.src_uri, file.inclusion.is_excluded()]


class _Lookups:
    """The site's files as a page's conversion sees them, noting every link target it looks up."""

    def __init__(self, files: Any) -> None:
        self._files = files
        self.seen: dict[str, Any] = {}  # path -> the File found (or None)

    def get_file_from_path(self, path: str) -> Any:
        found = self._files.get_file_from_path(path)
        self.seen[path] = found
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._files, name)

    def __iter__(self) -> Any:
        return iter(self._files)


class _Warned(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.any = False

    def emit(self, record: logging.LogRecord) -> None:
        self.any = True


def _key(page: Any, config: Any) -> str:
    return key("mkdocs-page", _version(), page.file.src_uri, page.file.url, page.file.inclusion.is_excluded(),
               config.use_directory_urls, config.theme.get("language"), config["markdown_extensions"],
               config["mdx_configs"] or {}, page.markdown)


def _entry_path(folder: Path, key: str) -> Path:
    return folder / key[:2] / f"{key}.z"


def _tokens(toc: Any) -> list[dict[str, Any]]:
    return [{"level": a.level, "id": a.id, "name": a.title, "children": _tokens(a.children)} for a in toc]


def _store(page: Any, lookups: _Lookups) -> bytes:
    by_file = {id(f): path for path, f in lookups.seen.items() if f is not None}
    links = {}
    for target, anchors in (getattr(page, "links_to_anchors", None) or {}).items():
        where = _SELF if target is page.file else by_file.get(id(target))
        if where is None:
            raise LookupError(target)
        links[where] = anchors
    return zlib.compress(json.dumps({
        "content": page.content, "toc": _tokens(page.toc), "title": page._title_from_render,
        "anchors": sorted(page.present_anchor_ids or ()), "links": links,
        "lookups": {path: _answer(f) for path, f in lookups.seen.items()}}).encode(), 1)


def _restore(page: Any, files: Any, data: dict[str, Any]) -> bool:
    """Put a kept conversion back on ``page``; False (nothing changed) when a link target resolves differently."""
    from mkdocs.structure import pages
    from mkdocs.structure.toc import get_toc

    found = {path: files.get_file_from_path(path) for path in data["lookups"]}
    if any(_answer(found[path]) != answer for path, answer in data["lookups"].items()):
        return False
    page.content = data["content"]
    page.toc = get_toc(data["toc"])
    page._title_from_render = data["title"]
    page.present_anchor_ids = set(data["anchors"])
    if pages.log.getEffectiveLevel() > logging.DEBUG:  # as mkdocs' own render does
        page.links_to_anchors = {page.file if where == _SELF else found[where]: anchors
                                 for where, anchors in data["links"].items()}
    return True


def render(original: Any, page: Any, config: Any, files: Any) -> None:
    """``original`` (mkdocs' `Page.render`) for ``page``, or its kept result when the build keeps pages
    (`config.extra.atlas_pages`, the cache folder)."""
    folder = (config.get("extra") or {}).get("atlas_pages")
    if not folder:
        original(page, config, files)
        return
    path = _entry_path(Path(folder), _key(page, config))
    try:
        data = json.loads(zlib.decompress(path.read_bytes()))
    except (OSError, ValueError, zlib.error):
        data = None
    if data is not None and _restore(page, files, data):
        os.utime(path)  # used: kept by `prune`
        return
    lookups, warned = _Lookups(files), _Warned()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(warned)
    try:
        original(page, config, lookups)
    finally:
        logger.removeHandler(warned)
    if not warned.any:
        try:
            write_atomic(path, _store(page, lookups))
        except LookupError:  # an anchor link to a file found some other way: not kept, converted every time
            pass


def install() -> None:
    """Route mkdocs' `Page.render` through `render` (once per process: mkdocs loads the hooks for every build)."""
    from mkdocs.structure.pages import Page

    original = Page.__dict__.get("_atlas_original", Page.render)
    Page._atlas_original = original  # type: ignore[attr-defined]
    Page.render = lambda page, config, files: render(original, page, config, files)  # type: ignore[method-assign]


def prune(folder: Path, days: float = KEEP_DAYS) -> int:
    """Remove the entries of ``folder`` that no build has used for ``days``; how many."""
    limit, removed = time.time() - days * 86400, 0
    for entry in folder.glob("*/*.z") if folder.is_dir() else ():
        try:
            if entry.stat().st_mtime < limit:
                entry.unlink()
                removed += 1
        except OSError:
            pass
    return removed
