"""The Jinja environments of the templates in ``render/templates``: Markdown pages and (escaped) HTML sheets."""

from __future__ import annotations

import jinja2

from .markdown import cell, fenced, oneline


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("generator.render", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=not autoescape,
        autoescape=autoescape,
    )
    env.filters.update(oneline=oneline, cell=cell, fenced=fenced)
    return env


# Markdown output: text fields are validated to hold no HTML, and escaped by `markdown_text` on top
MARKDOWN = _env(autoescape=False)
HTML = _env(autoescape=True)
