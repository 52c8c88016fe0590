"""Every symbol explained under a formula occurs in that formula: a renamed or misspelt symbol does not."""

from __future__ import annotations

import re

from ..errors import SourceError, did_you_mean
from ..read.load import Loaded
from ..resolve.variants import each
from .text import err

_TEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\S")
_TEX_SPACING = re.compile(r"\\[,;:! ]|\\q?quad|\\(left|right|[bB]igg?[lrm]?)")


def _tex_tokens(tex: str) -> list[str]:
    return [t for t in _TEX_TOKEN.findall(tex) if not _TEX_SPACING.fullmatch(t)]


def _tex_join(tokens: list[str]) -> str:
    return "".join(t + (" " if re.fullmatch(r"\\[A-Za-z]+", t) and i + 1 < len(tokens) and tokens[i + 1][0].isalpha()
                        else "") for i, t in enumerate(tokens))


def _symbol_parts(tex: str) -> list[list[str]]:
    """A symbol row may list several symbols (`M,\\ P`): split at top-level commas."""
    parts: list[list[str]] = [[]]
    depth = 0
    for t in _tex_tokens(tex):
        depth += (t == "{") - (t == "}")
        if t == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return [p for p in parts if p]


def _occurs(part: list[str], formula: list[str]) -> bool:
    """``part`` is a run of ``formula``'s tokens, braces aside; `\\cdot` in a symbol stands for any argument."""
    text = "".join(t + "\x1f" for t in formula if t not in "{}")
    pattern = "".join(r"(?:[^\x1f]+\x1f)+?" if t == r"\cdot" else re.escape(t + "\x1f") for t in part if t not in "{}")
    return re.search(r"(?:^|(?<=\x1f))" + pattern, text) is not None


def check_symbols(item: Loaded) -> list[SourceError]:
    errors = []
    for loc, f, _ in each(item.model, "formula"):
        tokens = _tex_tokens(f.tex)
        for i, sym in enumerate(f.symbols):
            for part in _symbol_parts(sym.tex):
                if not _occurs(part, tokens):
                    shown = _tex_join(part)
                    runs = {_tex_join(tokens[a:b]) for a in range(len(tokens))
                            for b in range(a + 1, min(a + 2 * len(part) + 2, len(tokens) + 1))
                            if tokens[a:b].count("{") == tokens[a:b].count("}")}
                    errors.append(err(item.doc, loc + ("symbols", i, "tex"), f"symbol '{shown}' does not occur in "
                                      f"the formula" + did_you_mean(shown, sorted(runs))))
    return errors
