"""The translation status page and the translators' guide page, for one language and one TRL version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .i18n import Report, report
from .render import _ENV, Ctx

STATUS_PAGE = "translation-status"
GUIDE_PAGE = "translating"
GUIDE_SOURCE = "TRANSLATING.md"
LIST_LIMIT = 60  # longer lists (a language just started) are left to `atlas i18n status`


def atlas_report(ctx: Ctx) -> Report:
    cfg = ctx.atlas.config
    langs = [code for code in cfg.lang_codes if code != cfg.default_lang]
    return report([it.doc for it in ctx.atlas.sources], langs, cfg.default_lang, ctx.atlas.stamps)


def _pct(x: float) -> str:
    return f"{x:.0f} %" if x in (0.0, 100.0) or x >= 1 else f"{x:.1f} %"


def render_status(ctx: Ctx) -> str:
    cfg = ctx.atlas.config
    rep = atlas_report(ctx)
    langs = [lang for lang in cfg.languages if lang.code in rep.langs]
    summary = [{"lang": lang, "translated": rep.translated(lang.code), "total": rep.count(lang.code),
                "stale": rep.count(lang.code, "stale"), "unstamped": rep.count(lang.code, "unstamped"),
                "pct": _pct(rep.percent(lang.code))} for lang in langs]
    kinds = [{"kind": k, "cells": [_cell(rep, lang.code, kind=k) for lang in langs]} for k in rep.kinds()]
    files = [{"path": p, "href": cfg.edit_base + p, "cells": [_cell(rep, lang.code, path=p) for lang in langs]}
             for p in rep.paths()]
    lists = [{"lang": lang, "stale": rep.of_state(lang.code, "stale"), "missing": rep.of_state(lang.code, "missing")}
             for lang in langs]
    return _ENV.get_template("i18n_status.md.j2").render(**ctx.base(
        summary=summary, kinds=kinds, files=files, lists=lists, langs=langs, limit=LIST_LIMIT,
        edit_base=cfg.edit_base, edit_url=cfg.edit_base + "atlas.yml"))


def _cell(rep: Report, lang: str, **where: Any) -> str:
    total = rep.count(lang, **where)
    text = f"{rep.translated(lang, **where)}/{total}"
    stale = rep.count(lang, "stale", **where)
    return text + (f" · **{stale}** ⚠" if stale else "")


def render_guide(ctx: Ctx) -> str:
    """TRANSLATING.md as a site page; its links point at repository files, which the site does not hold."""
    text = (ctx.atlas.root / GUIDE_SOURCE).read_text(encoding="utf-8")
    return (f"---\nedit_url: \"{ctx.atlas.config.edit_base}{GUIDE_SOURCE}\"\n---\n\n"
            + (f"!!! note \"{ctx.t('translating_english')}\"\n\n" if ctx.lang != ctx.atlas.config.default_lang else "")
            + text)


def has_guide(root: Path) -> bool:
    return (root / GUIDE_SOURCE).exists()
