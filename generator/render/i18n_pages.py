"""The translation status page and the translators' guide page, in one language."""

from __future__ import annotations

from typing import Any

from ..read.translations import Report, report
from .env import MARKDOWN
from .view import View

GUIDE_SOURCE = "TRANSLATING.md"
LIST_LIMIT = 60  # longer lists (a language just started) are left to `atlas i18n status`


def translation_report(view: View) -> Report:
    cfg = view.config
    return report([it.doc for it in view.atlas.translated], [lang.code for lang in cfg.translations],
                  cfg.default_lang, view.atlas.stamps)


def _pct(x: float) -> str:
    return f"{x:.0f} %" if x in (0.0, 100.0) or x >= 1 else f"{x:.1f} %"


def _cell(rep: Report, lang: str, **where: Any) -> str:
    total = rep.count(lang, **where)
    text = f"{rep.translated(lang, **where)}/{total}"
    stale = rep.count(lang, "stale", **where)
    return text + (f" · **{stale}** ⚠" if stale else "")


def render_status(view: View, rep: Report) -> str:
    langs = view.config.translations
    summary = [{"lang": lang, "translated": rep.translated(lang.code), "total": rep.count(lang.code),
                "stale": rep.count(lang.code, "stale"), "unstamped": rep.count(lang.code, "unstamped"),
                "pct": _pct(rep.percent(lang.code))} for lang in langs]
    kinds = [{"kind": k, "cells": [_cell(rep, lang.code, kind=k) for lang in langs]} for k in rep.kinds()]
    files = [{"path": p, "href": view.edit_url(p), "cells": [_cell(rep, lang.code, path=p) for lang in langs]}
             for p in rep.paths()]
    lists = [{"lang": lang, "stale": rep.of_state(lang.code, "stale"), "missing": rep.of_state(lang.code, "missing")}
             for lang in langs]
    return MARKDOWN.get_template("i18n_status.md.j2").render(**view.base(
        summary=summary, kinds=kinds, files=files, lists=lists, langs=langs, limit=LIST_LIMIT,
        edit_base=view.config.edit_base, edit_url=view.edit_url("atlas.yml")))


def render_guide(view: View) -> str | None:
    """TRANSLATING.md as a site page (None when the checkout has none); its links point at repository files, which
    the site does not hold."""
    source = view.atlas.root / GUIDE_SOURCE
    if not source.is_file():
        return None
    note = "" if view.lang.default else f"!!! note \"{view.t('translating_english')}\"\n\n"
    return f"---\nedit_url: \"{view.edit_url(GUIDE_SOURCE)}\"\n---\n\n{note}" + source.read_text(encoding="utf-8")
