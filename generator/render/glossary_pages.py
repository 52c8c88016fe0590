"""The glossary pages of a line, in one language: the index and one page per entry."""

from __future__ import annotations

from typing import Any

from ..read.glossary import GlossaryEntry
from ..read.load import Loaded
from . import paths
from .env import MARKDOWN
from .notices import notice
from .termlinks import link_terms
from .view import View


def entry_href(from_doc: str, entry: GlossaryEntry) -> str:
    """Relative link from the page ``from_doc`` to ``entry``; i18n picks the reader's language."""
    return paths.rel(from_doc, paths.entry_doc(entry))


def capfirst(s: str) -> str:
    """A term as a title: 'chính sách' -> 'Chính sách' (term bases keep the running-text form)."""
    return s[:1].upper() + s[1:]


def render_glossary_index(view: View) -> str:
    rows = [{"e": it.model, "title": capfirst(view.text(it.model.term)), "href": f"{it.model.id}.md"}
            for it in view.glossary_sorted]
    return MARKDOWN.get_template("glossary_index.md.j2").render(**view.base(
        rows=rows, english=not view.lang.default, default=view.default.code,
        edit_url=view.edit_url(f"{paths.GLOSSARY}/")))


def render_glossary_entry(view: View, item: Loaded) -> str:
    e: GlossaryEntry = item.model
    here = paths.entry_doc(e)
    by_id = {it.model.id: it.model for it in view.edition.glossary}
    used = [{"key": m.key, "summary": m.summary, "href": paths.rel(here, paths.metric_doc(m))}
            for m in view.glossary_users.get(e.id, [])]
    see = [{"e": by_id[i], "title": capfirst(view.text(by_id[i].term)), "href": f"{i}.md"}
           for i in e.see_also if i in by_id]

    def linked(text: Any) -> str:  # other glossary terms in the definition and example link to their entries
        return link_terms(view.markdown(text), view.term_index, lambda o: entry_href(here, o), skip=[e.id])

    return MARKDOWN.get_template("glossary_entry.md.j2").render(**view.base(
        e=e, used=used, see=see, english=not view.lang.default, default=view.default.code,
        definition=linked(e.definition), example=linked(e.example) if e.example else "",
        title=capfirst(view.text(e.term)), edit_url=view.edit_url(item.path),
        notice=lambda section: notice(view, item, section, view.english_url(here))))


def metric_terms(view: View, m: Any, page: str) -> list[dict[str, Any]]:
    """The glossary entries a metric page uses, for its "terms on this page" list."""
    used = view.terms_of.get(id(m), set())
    return [{"e": it.model, "href": entry_href(page, it.model)} for it in view.glossary_sorted if it.model.id in used]
