"""An explainer page: what several keys of a trainer share or how they differ, with its own worked example."""

from __future__ import annotations

from ..read.load import Loaded
from ..resolve.edition import TrainerEdition
from . import paths
from .env import MARKDOWN
from .glossary_pages import entry_href
from .metric_page import example_call, link_md
from .notices import notice
from .termlinks import link_terms
from .view import View


def render_explainer(view: View, trainer: TrainerEdition, item: Loaded) -> str:
    e = item.model
    here = paths.explainer_doc(e)
    metrics = [{"key": r.metric.key, "summary": r.metric.summary, "href": paths.rel(here, paths.metric_doc(r.metric))}
               for ref in e.metrics if (r := view.edition.metric(ref)) is not None]
    md = MARKDOWN.get_template("explainer.md.j2").render(**view.base(
        e=e, cls=trainer.cls, metrics=metrics, link_md=link_md,
        call=example_call(e.snippet) if e.snippet else None, edit_url=view.edit_url(item.path),
        notice=lambda section: notice(view, item, section, view.english_url(here))))
    return link_terms(md, view.term_index, lambda entry: entry_href(here, entry), skip_sections=("metrics", "sources"))
