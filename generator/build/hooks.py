"""MkDocs hooks: per-page "edit this page" links to the YAML source, the formulas' HTML put into the finished pages,
each page's article marked for the search index (`build.search_index`) unless its front matter says
`search: false`, pymdownx's highlighting done once per snippet, and each page's Markdown conversion and the theme's
compiled templates kept by content across builds (`page_cache`, Jinja's bytecode cache)."""

from __future__ import annotations

import functools
import html
import inspect
import json
from pathlib import Path
from typing import Any

from jinja2 import FileSystemBytecodeCache
from pymdownx.highlight import Highlight

from generator.build import page_cache
from generator.render.mathref import expand

page_cache.install()  # each page's conversion kept by content when the build says where (`extra.atlas_pages`)

_ARTICLE = '<article class="md-content__inner md-typeset">'


@functools.cache
def _math_table(path: str) -> dict[str, str]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def on_post_page(output: str, page: Any, config: Any) -> str:
    # the formulas' KaTeX HTML goes into the finished page, after Markdown has seen it
    if table := config["extra"].get("atlas_math"):
        output = expand(output, _math_table(table))
    if page.meta.get("search") is False:  # a metric's history page: the search leads to the metric's own page
        return output
    sections = config["extra"].get("search_sections") or {}
    return output.replace(_ARTICLE, _ARTICLE[:-1] + f" {search_attributes(page.url, sections)}>", 1)


def search_attributes(url: str, sections: dict[str, str]) -> str:
    """The article is what the search indexes; a result names the section it comes from (a trainer, the glossary):
    two trainers log keys of the same name. ``sections``: the title of each first folder, the language's in front."""
    parts = url.split("/")
    section = sections.get(parts[0]) or sections.get("/".join(parts[:2]), "")
    return "data-pagefind-body" + (f' data-pagefind-meta="section:{html.escape(section)}"' if section else "")


def on_env(env: Any, config: Any, files: Any) -> Any:
    # the theme's templates compiled once per machine, not again in every build and language (mkdocs makes a new
    # environment for each, and the i18n plugin builds each language anew): Jinja's bytecode cache, one entry per
    # template name and path that holds its source's checksum (a changed template is compiled again and replaces
    # its entry), in the build cache when the build says where (`extra.atlas_templates`)
    if folder := config["extra"].get("atlas_templates"):
        Path(folder).mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = FileSystemBytecodeCache(folder)
    return env


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    # every generated page carries the URL of the source it came from
    if edit_url := page.meta.get("edit_url"):
        page.edit_url = edit_url
    return markdown


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
