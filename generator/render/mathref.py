"""Formulas on pages go through mkdocs as small placeholders and become their KaTeX HTML only in the finished page:
Markdown, md_in_html and the search plugin would otherwise parse every one of KaTeX's hundreds of tags on every
page (most of mkdocs' time per page)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

_REF = re.compile(r'<span class="atlas-math-ref" data-math="([0-9a-f]{16})"></span>')


def math_key(tex: str, display: bool) -> str:
    return hashlib.sha256(f"{int(display)}:{tex}".encode()).hexdigest()[:16]


def placeholder(tex: str, display: bool) -> str:
    return f'<span class="atlas-math-ref" data-math="{math_key(tex, display)}"></span>'


def write_table(math: dict[tuple[str, bool], str], path: Path) -> None:
    """Every formula's HTML by its placeholder's key, for `expand` (the mkdocs hooks) to read."""
    path.write_text(json.dumps({math_key(tex, d): html for (tex, d), html in math.items()}), encoding="utf-8")


def expand(page_html: str, table: dict[str, str]) -> str:
    """The page with each placeholder replaced by its formula's HTML."""
    return _REF.sub(lambda m: table[m.group(1)], page_html)
