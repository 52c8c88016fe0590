"""Translation notices on a page: which texts of a section are shown in the default language (missing in the page's
language) or translate an older text (stale), each with its line in the source to fix."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..read.load import Loaded
from ..resolve.variants import HISTORY
from .view import View

# where each field of a source file shows on its page (fields absent here, such as `cheatsheet`, are not on it)
SECTIONS = {"title": "top", "summary": "top", "meaning": "meaning", "formula": "formula", "snippet": "snippet",
            "aggregation": "aggregation", "logged_when": "logged_when", "healthy": "healthy",
            "troubleshooting": "troubleshooting", "corrections": "corrections", "namesakes": "namesakes",
            "conformance": "conformance",
            # glossary entries
            "term": "top", "short": "top", "definition": "top", "example": "example",
            # trainer files, on the trainer's index page
            "intro": "top", "categories": "top", "crucial": "crucial",
            # explainers
            "body": "top"}


def section_of(loc: tuple, variant: int | None, model: Any, details: Collection[int] = ()) -> str | None:
    """The page section that shows the field at ``loc``, on a page showing variant ``variant`` (None: the newest
    range) whose history page shows the variants ``details`` in full (section "history"); None when the page does not
    show it (another range's replacement, or a replaced top-level field)."""
    if loc[0] == "variants":
        index, name = loc[1], str(loc[2])
        if name == "change":
            return "changed_in"
        if index in details and name in HISTORY:
            return "history"
        return SECTIONS.get(name) if index == variant else None
    if variant is not None and getattr(model.variants[variant], str(loc[0]), None) is not None:
        return None
    return SECTIONS.get(str(loc[0]))


def notice(view: View, item: Loaded, section: str, english_href: str, variant: int | None = None,
           details: Collection[int] = ()) -> str:
    """Admonitions naming the texts of ``section`` that are missing or stale in the view's language; empty when the
    section is fully current. ``variant``: the range of the metric's history the page shows (None: the newest);
    ``details``: the ranges its history page shows in full."""
    out = []
    for state in ("missing", "stale"):
        hits = [f for f in view.states.get(item.path, []) if f.state == state
                and section_of(f.loc, variant, item.model, details) == section]
        if hits:
            where = ", ".join(f"`{f.name}` ({view.t('i18n_line', line=f.line)})" for f in hits)
            text = view.t(f"i18n_{state}_text", fields=where, path=item.path, lang=view.lang.name,
                          edit=view.edit_url(item.path), english=english_href)
            out.append(f'!!! {"warning" if state == "stale" else "info"} atlas-i18n-{state} '
                       f'"{view.t(f"i18n_{state}_title", lang=view.lang.name)}"\n\n    {text}\n')
    return "\n".join(out)
