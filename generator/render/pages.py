"""Every Markdown page of one (edition, language), by its file in the generated docs."""

from __future__ import annotations

from typing import Any

from ..errors import BuildError
from ..read.translations import Report
from . import paths
from .doctor_pages import render_check_my_run, render_symptoms
from .explainer_page import render_explainer
from .glossary_pages import render_glossary_entry, render_glossary_index
from .i18n_pages import render_guide, render_status
from .metric_page import render_metric, render_metric_history
from .sheet import has_sheets, render_cheatsheets_page
from .site_pages import render_home, render_which_version
from .trainer_pages import index_doc, render_coverage, render_removed, render_trainer_index
from .view import View


def pages(view: View, report: Report, example: dict[str, Any] | None = None) -> dict[str, str]:
    """``{docs path: Markdown}`` of every page of the view's line in its language (``report``: the translation
    status of the sources, the same for every page; ``example``: the real `atlas doctor` report that "Check my run"
    shows, made by the top layer, or None)."""
    out: dict[str, str] = {"index.md": render_home(view), "versions.md": render_which_version(view),
                           f"{paths.CHECK_PAGE}.md": render_check_my_run(view, example)}
    if has_sheets(view):
        out["cheatsheets.md"] = render_cheatsheets_page(view)
    for trainer in view.edition.trainers:
        out[index_doc(trainer)] = render_trainer_index(view, trainer)
        out[f"{trainer.id}/conformance.md"] = render_coverage(view, trainer)
        out[paths.symptoms_doc(trainer.id)] = render_symptoms(view, trainer)
        for res in trainer.metrics:
            _add(out, paths.metric_doc(res.metric), render_metric(view, trainer, res))
            if (history := render_metric_history(view, res)) is not None:
                _add(out, paths.history_doc(res.metric), history)
        for item in trainer.explainers:
            out[paths.explainer_doc(item.model)] = render_explainer(view, trainer, item)
    for gone in view.edition.removed:
        out[f"{gone.id}/index.md"] = render_removed(view, gone)
    if view.edition.glossary:
        out[f"{paths.GLOSSARY}/index.md"] = render_glossary_index(view)
        for item in view.edition.glossary:
            out[paths.entry_doc(item.model)] = render_glossary_entry(view, item)
    out[f"{paths.STATUS_PAGE}.md"] = render_status(view, report)
    if (guide := render_guide(view)) is not None:
        out[f"{paths.GUIDE_PAGE}.md"] = guide
    return {paths.in_language(doc, view.lang): text for doc, text in out.items()}


def _add(out: dict[str, str], doc: str, text: str) -> None:
    """A metric's page or history page, refused at a path already taken: a key ending in ``/history`` under
    another key of the same trainer would take its history page's path."""
    if doc in out:
        raise BuildError(f"{doc}: the history page of one metric and the page of another have the same path; "
                         "rename the key that ends in /history")
    out[doc] = text
