"""MkDocs hooks: per-page "edit this page" links to the YAML source, and the search index split by language (the
languages and folders passed as ``extra.search_languages``), with an accent-folded copy of the text in the languages
that ask for it (`fold_accents` in atlas.yml)."""

from __future__ import annotations

import functools
import inspect
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs_static_i18n.plugin import I18n
from pymdownx.highlight import Highlight

from generator.render.mathref import expand

_TAGS = re.compile(r"<[^>]+>")
_PUNCTUATION = re.compile(r"[^\w\s]")


@functools.cache
def _math_table(path: str) -> dict[str, str]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def on_post_page(output: str, page: Any, config: Any) -> str:
    # the formulas' KaTeX HTML goes into the finished page, after Markdown and the search index have seen it
    if table := config["extra"].get("atlas_math"):
        return expand(output, _math_table(table))
    return output


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    # every generated page carries the URL of the source it came from
    if edit_url := page.meta.get("edit_url"):
        page.edit_url = edit_url
    return markdown


def fold(text: str) -> str:
    """Text without diacritics or punctuation, for search only: 'cắt (ngưỡng)' -> 'cat  nguong '. Punctuation goes
    because the search index does not trim it from the words it sits against ('(tương' would not match 'tuong')."""
    text = _TAGS.sub(" ", text).replace("đ", "d").replace("Đ", "D")
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    return _PUNCTUATION.sub(" ", bare)


def language_of(location: str, languages: list[dict[str, Any]]) -> str:
    """The code of the language whose folder holds ``location`` (the default language has none)."""
    return next((lang["code"] for lang in languages if lang["prefix"] and location.startswith(lang["prefix"])),
                next(lang["code"] for lang in languages if not lang["prefix"]))


def _drop_duplicate_entries(plugin: I18n, entries: list[dict[str, Any]]) -> None:
    """mkdocs-static-i18n's rule for the merged search index, in linear time: an entry of another language's folder
    with the title and text of a default-language entry whose location it ends with is dropped. The plugin compares
    every pair of entries: 12 million comparisons, 9 s of the build, for a line of 640 pages in three languages."""
    prefixes = tuple(f"{lang}/" for lang in plugin.build_languages)
    others: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in entries:
        if entry["location"].startswith(prefixes):
            others.setdefault((entry["title"], entry["text"]), []).append(entry)
    dropped: set[int] = set()
    for entry in entries:
        if entry["location"].startswith(prefixes):
            continue
        same = others.get((entry["title"], entry["text"]), [])
        for twin in [e for e in same if e["location"].endswith(entry["location"])]:
            same.remove(twin)
            dropped.add(id(twin))
    entries[:] = [e for e in entries if id(e) not in dropped]


I18n.reconfigure_search_duplicates = _drop_duplicate_entries  # type: ignore[method-assign]

# mkdocs runs this file again for every build of a process (`atlas serve --watch`): wrap the original only once
_highlight = Highlight.__dict__.get("_atlas_original", Highlight.highlight)
Highlight._atlas_original = _highlight  # type: ignore[attr-defined]
_HIGHLIGHT_ARGS = inspect.signature(_highlight)
_highlighted: dict[str, str] = {}


def _highlight_once(self: Highlight, src: str, language: str, *args: Any, **kwargs: Any) -> str:
    """pymdownx's highlighting, remembered for the build: a line's pages show each snippet once per language. The
    answer depends on the code, the block's options and the extension's settings only (not on the page), except a
    block with a title, which it may stash in the page's Markdown instance: those are highlighted every time."""
    call = _HIGHLIGHT_ARGS.bind(self, src, language, *args, **kwargs).arguments
    if call.get("title"):
        return _highlight(self, src, language, *args, **kwargs)
    settings = sorted((k, v) for k, v in vars(self).items() if k != "md")
    key = repr(([(k, v) for k, v in call.items() if k != "self"], settings))
    if key not in _highlighted:
        _highlighted[key] = _highlight(self, src, language, *args, **kwargs)
    return _highlighted[key]


Highlight.highlight = _highlight_once  # type: ignore[method-assign]


@event_priority(-200)  # after mkdocs-static-i18n (-100) has merged every language into one index
def on_post_build(config: Any, **kwargs: Any) -> None:
    folder = Path(config["site_dir"]) / "search"
    path = folder / "search_index.json"
    languages = config["extra"].get("search_languages") or []
    if not path.exists() or not languages:
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    if any(lang["fold"] for lang in languages):
        index["config"].setdefault("fields", {})["keywords"] = {"boost": 0.5}
    by_lang: dict[str, list[dict[str, Any]]] = {lang["code"]: [] for lang in languages}
    folds = {lang["code"] for lang in languages if lang["fold"]}
    for doc in index["docs"]:
        code = language_of(doc["location"], languages)
        if code in folds:
            doc["keywords"] = fold(doc.get("title", "") + " " + doc.get("text", ""))
        by_lang[code].append(doc)
    for code, docs in by_lang.items():
        config_ = index["config"]
        if code in folds:
            # folded syllables are often English stop words (độ -> do, ổn -> on, nó -> no), which lunr's English
            # filter would drop from the index: a folding language's index is analysed by its own lunr language only
            config_ = {**config_, "lang": [code]}
        (folder / f"search_index.{code}.json").write_text(
            json.dumps({**index, "config": config_, "docs": docs}, ensure_ascii=False, separators=(",", ":")),
            encoding="utf-8")
    # the whole index stays for readers without the split script (it only ever asks for its own language)
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
