"""A trainer's pages on one line: its index (the keys by category, the settings that change what they mean) and
its conformance coverage."""

from __future__ import annotations

import re
from typing import Any

from ..resolve.edition import Removed, TrainerEdition
from ..resolve.variants import Resolved
from . import paths
from .env import MARKDOWN
from .notices import notice
from .sheet import sheet_links
from .view import View

_KEY = re.compile(r"`([^`]+)`")  # a key the strip names


def index_doc(trainer: TrainerEdition) -> str:
    return f"{trainer.id}/index.md"


def _row(view: View, trainer: TrainerEdition, res: Resolved) -> dict[str, Any]:
    m = res.metric
    # the healthy range when there is one; otherwise what the maths allows and the expected trend
    healthy = (view.bounds(m.healthy.range) if m.healthy.range
               else f"{view.bounds(m.healthy.bounds)} · {view.t('trend_' + m.healthy.trend)}")
    return {"m": m, "href": paths.rel(index_doc(trainer), paths.metric_doc(m)), "healthy": healthy}


def _counts(trainer: TrainerEdition) -> dict[str, int]:
    return {"checked": sum(r.metric.conformance.checked for r in trainer.metrics), "total": len(trainer.metrics)}


def _linked_strip(view: View, trainer: TrainerEdition, doc: str) -> str | None:
    """The "read the curves in this order" line, each key it names linked to its page on this line."""
    if trainer.trainer.strip is None:
        return None
    hrefs = {r.metric.key: paths.rel(doc, paths.metric_doc(r.metric)) for r in trainer.metrics}
    return _KEY.sub(lambda k: f"[`{k[1]}`]({hrefs[k[1]]})" if k[1] in hrefs else k[0],
                    view.markdown(trainer.trainer.strip).strip())


def render_trainer_index(view: View, trainer: TrainerEdition) -> str:
    groups = [(cat, [_row(view, trainer, r) for r in rows]) for cat, rows in trainer.categories()]
    doc = index_doc(trainer)
    explainers = [{"e": e.model, "href": paths.rel(doc, paths.explainer_doc(e.model))} for e in trainer.explainers]
    return MARKDOWN.get_template("trainer_index.md.j2").render(**view.base(
        trainer=trainer.trainer, cls=trainer.cls, groups=groups, defaults=trainer.defaults, explainers=explainers,
        strip=_linked_strip(view, trainer, doc),
        **_counts(trainer),
        sheet=sheet_links(view, trainer, view.lang.prefix + paths.folder(doc)),
        edit_url=view.edit_url(trainer.item.path),
        notice=lambda section: notice(view, trainer.item, section, view.english_url(doc))))


def render_coverage(view: View, trainer: TrainerEdition) -> str:
    rows = [_row(view, trainer, r) for r in trainer.metrics]
    return MARKDOWN.get_template("coverage.md.j2").render(**view.base(
        trainer=trainer.trainer, cls=trainer.cls, rows=rows, **_counts(trainer),
        edit_url=view.edit_url(f"metrics/{trainer.id}/")))


def render_removed(view: View, gone: Removed) -> str:
    """The index page of a trainer that the line's release no longer has: where its pages are."""
    last = gone.trainer.classes[-1]
    href = f"{paths.line_path(view.config, gone.last)}{view.lang.prefix}{gone.id}/"
    return MARKDOWN.get_template("trainer_removed.md.j2").render(**view.base(
        trainer=gone.trainer, cls=last, last=gone.last, href=href, edit_url=view.edit_url(gone.item.path)))
