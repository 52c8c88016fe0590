"""Glossary pages for one language and one TRL version: the index and one page per entry. Never reads YAML."""

from __future__ import annotations

import posixpath
from typing import Any

from .glossary import GlossaryEntry
from .load import Loaded
from .render import _ENV, Ctx, page_path
from .termlinks import link_terms

FOLDER = "glossary"


def entry_path(entry: GlossaryEntry, lang: str, default_lang: str) -> str:
    """Source path of an entry's page in the generated docs, e.g. ``glossary/policy.zh.md``."""
    return f"{FOLDER}/{entry.id}{'' if lang == default_lang else '.' + lang}.md"


def href_from(page: str, entry: GlossaryEntry, default_lang: str) -> str:
    """Relative link from the (default-language) page ``page`` to ``entry``; i18n picks the reader's language."""
    return posixpath.relpath(entry_path(entry, default_lang, default_lang), posixpath.dirname(page) or ".")


def entries_sorted(ctx: Ctx) -> list[Loaded]:
    return sorted(ctx.atlas.glossary, key=lambda it: it.model.term.get("en").casefold())


def render_glossary_index(ctx: Ctx) -> str:
    cfg = ctx.atlas.config
    rows = [{"e": it.model, "title": capfirst(ctx.text(it.model.term)), "href": f"{it.model.id}.md"}
            for it in entries_sorted(ctx)]
    return _ENV.get_template("glossary_index.md.j2").render(**ctx.base(
        rows=rows, english=ctx.lang != "en", edit_url=cfg.edit_base + f"{FOLDER}/"))


def render_glossary_entry(ctx: Ctx, item: Loaded) -> str:
    cfg = ctx.atlas.config
    e: GlossaryEntry = item.model  # type: ignore[assignment]
    here = entry_path(e, cfg.default_lang, cfg.default_lang)
    by_id = {it.model.id: it.model for it in ctx.atlas.glossary}
    users: list[Any] = ctx.glossary_users.get(e.id, [])
    used = [{"key": m.key, "summary": m.summary,
             "href": posixpath.relpath(page_path(m, cfg.default_lang, cfg.default_lang), FOLDER)} for m in users]
    see = [{"e": by_id[i], "title": capfirst(ctx.text(by_id[i].term)), "href": f"{i}.md"}
           for i in e.see_also if i in by_id]
    def linked(text: Any) -> str:  # other glossary terms in the definition and example link to their entries
        return link_terms(ctx.text(text), ctx.term_index, lambda o: href_from(here, o, cfg.default_lang), skip=[e.id])

    return _ENV.get_template("glossary_entry.md.j2").render(**ctx.base(
        e=e, used=used, see=see, english=ctx.lang != "en", definition=linked(e.definition),
        example=linked(e.example) if e.example else "", title=capfirst(ctx.text(e.term)),
        edit_url=cfg.edit_base + item.path,
        notice=lambda section: ctx.notice(item, section, ctx.english_url(here))))


def capfirst(s: str) -> str:
    """A term as a title: 'chính sách' -> 'Chính sách' (term bases keep the running-text form)."""
    return s[:1].upper() + s[1:]


def metric_terms(ctx: Ctx, m: Any, page: str) -> list[dict[str, Any]]:
    """The glossary entries a metric page uses, for its "terms on this page" list."""
    cfg = ctx.atlas.config
    return [{"e": it.model, "href": href_from(page, it.model, cfg.default_lang)}
            for it in entries_sorted(ctx) if m in ctx.glossary_users.get(it.model.id, [])]
