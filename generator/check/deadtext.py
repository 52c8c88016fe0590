"""No dead text: every field of every source is shown on some page or cheat-sheet of some documented line. Text
that no reader sees is text no reviewer sees, and translators would keep it up to date for nobody."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SourceError
from ..read.load import Loaded
from ..resolve.edition import Edition, shown
from ..resolve.variants import HISTORY, span
from .text import err

Loc = tuple[str | int, ...]


def _lines(editions: Sequence[Edition]) -> str:
    return ", ".join(f"{e.line.name} (TRL {e.release})" for e in editions)


def _why(item: Loaded, loc: Loc, editions: Sequence[Edition]) -> str:
    """Why the field at ``loc`` of a file that some page shows is shown nowhere."""
    model = item.model
    if loc[0] == "variants" and len(loc) > 2 and hasattr(model, "variants"):
        start, end = span(model, int(loc[1]))
        return (f"no line describes TRL {start} to {end or 'today'}, and the metric's history page shows only "
                f"{', '.join(HISTORY)} of such a range in full")
    if loc[0] == "categories":
        return "no metric of this category is logged by the release of any line"
    if loc[:2] == ("conformance", "reason"):
        return "a reason is shown only when `checked` is false"
    return f"every line replaces it by a variant's ({_lines(editions)})"


def _unshown(data: Any, loc: Loc, visible: set[Loc]) -> list[Loc]:
    """The highest places under ``loc`` that neither are nor contain nor lie in a shown place."""
    if loc in visible:
        return []
    if not any(v[:len(loc)] == loc for v in visible):
        return [loc]
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else []
    return [found for key, value in items for found in _unshown(value, loc + (key,), visible)]


def check_dead_text(items: Sequence[Loaded], editions: Sequence[Edition]) -> list[SourceError]:
    """One error per field of ``items`` (valid metric, trainer and glossary files) that no page or sheet shows."""
    places: dict[str, set[Loc]] = {}
    for edition in editions:
        for path, loc in shown(edition):
            places.setdefault(path, set()).add(loc)
    errors = []
    for item in items:
        visible = places.get(item.path, set())
        if not visible:
            first = next(iter(item.doc.data))  # the file's first field names the file's subject (key, id)
            errors.append(err(item.doc, (first,), f"shown on no page: the release of no documented line has it "
                                                  f"(lines: {_lines(editions)})"))
            continue
        for loc in _unshown(item.doc.data, (), visible):
            errors.append(err(item.doc, loc, f"shown on no page or cheat-sheet: {_why(item, loc, editions)}; "
                                             f"remove it"))
    return errors
