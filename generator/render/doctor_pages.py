"""The pages about reading a user's own run: each trainer's symptom index (every troubleshooting symptom of its
pages, grouped, linking to the pages that treat it) and "Check my run" (atlas doctor and its training callback,
with a real report as the example)."""

from __future__ import annotations

from typing import Any

from ..read.metric import FOR_LOGS, NOISE, RANGE_FOR_LOGS, TREND_CHANGE, TREND_WINDOW
from ..resolve.edition import TrainerEdition
from . import paths
from .env import MARKDOWN
from .view import View

GROUP = "symptom_group_"


def symptom_groups(view: View, trainer: TrainerEdition) -> list[dict[str, Any]]:
    """The trainer's symptoms on this line by group, in the order of the groups' UI strings; ungrouped ones last."""
    here = paths.symptoms_doc(trainer.id)
    order = [k[len(GROUP):] for k in view.atlas.ui[view.lang.code] if k.startswith(GROUP)]
    found: dict[str | None, list[dict[str, Any]]] = {}
    for res in trainer.metrics:
        href = paths.rel(here, paths.metric_doc(res.metric)) + "#troubleshooting"
        for tr in res.metric.troubleshooting:
            found.setdefault(tr.group, []).append({"symptom": tr.symptom, "key": res.metric.key, "href": href})
    groups = [{"title": view.t(GROUP + g), "items": found[g]} for g in order if g in found]
    if None in found:
        groups.append({"title": view.t("symptoms_other"), "items": found[None]})
    return groups


def render_symptoms(view: View, trainer: TrainerEdition) -> str:
    here = paths.symptoms_doc(trainer.id)
    return MARKDOWN.get_template("symptoms.md.j2").render(**view.base(
        trainer=trainer.trainer, groups=symptom_groups(view, trainer),
        check_href=paths.rel(here, f"{paths.CHECK_PAGE}.md"),
        edit_url=view.edit_url(f"locales/{view.lang.code}/ui.yaml")))


def render_check_my_run(view: View, example: dict[str, Any] | None) -> str:
    """``example``: a real report in this language (``text``) and the run it read (``trl``, ``steps``), or None."""
    here = f"{paths.CHECK_PAGE}.md"
    symptoms = [{"title": t.trainer.title, "href": paths.rel(here, paths.symptoms_doc(t.id))}
                for t in view.edition.trainers]
    rules = view.t("check_rules", n=FOR_LOGS, range_n=RANGE_FOR_LOGS, window=TREND_WINDOW,
                   noise=view.lang.number(NOISE), pct=f"{view.lang.number(TREND_CHANGE * 100)}%")
    return MARKDOWN.get_template("check_my_run.md.j2").render(**view.base(
        rules=rules, example=example, symptoms=symptoms, trainer_cls=[t.cls for t in view.edition.trainers],
        edit_url=view.edit_url(f"locales/{view.lang.code}/ui.yaml")))
