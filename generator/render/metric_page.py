"""The page of one metric, as the edition's release logs it."""

from __future__ import annotations

import math
import re
from typing import Any

from ..read.metric import Link, Snippet, Tensor
from ..resolve.edition import TrainerEdition
from ..resolve.variants import Resolved
from . import paths
from .env import MARKDOWN
from .glossary_pages import entry_href, metric_terms
from .notices import notice
from .termlinks import link_terms
from .view import View


def _py(value: Any) -> str:
    return repr(value) if not isinstance(value, float) or value == value else "float('nan')"


def _literal(value: Any, floating: bool) -> str:
    """Python source for a tensor's nested values, as a reader copies it: True/False, nan, and 1.0 (not 1) where the
    tensor is floating-point, so that torch.tensor() infers the dtype the example was run with."""
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v, floating) for v in value) + "]"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "float('inf')" if value > 0 else "-float('inf')"
    return repr(float(value)) if floating and isinstance(value, int) else repr(value)


def _tensor(value: Any, dtype: str) -> str:
    return f"torch.tensor({_literal(value, dtype.startswith('float'))}{_dtype_arg(dtype)})"


def _dtype_arg(dtype: str) -> str:
    return "" if dtype == "float32" else f", dtype=torch.{dtype}"


def example_call(snippet: Snippet) -> tuple[str, str]:
    """The worked example as a runnable call, and its expected result."""
    ex = snippet.example
    args = []
    for name, spec in ex.inputs.items():
        if isinstance(spec, Tensor):
            if spec.list:
                args.append(f"    {name}=[{', '.join(_tensor(v, spec.dtype) for v in spec.value)}],")
            else:
                args.append(f"    {name}={_tensor(spec.value, spec.dtype)},")
        else:
            args.append(f"    {name}={_py(spec)},")
    call = f"{snippet.function}(\n" + "\n".join(args) + "\n)"
    if "nan" in call:
        call = "nan = float('nan')\n" + call
    if "torch." in call and not re.search(r"^import torch$", snippet.code, re.M):
        call = "import torch\n" + call  # the function itself needs no torch, its example's tensors do
    expected = "None / NaN" if ex.expected is None else repr(ex.expected)
    return call, expected


def link_md(link: Link) -> str:
    return f"[{link.title}]({link.url})" if link.url else link.title


def _history(view: View, res: Resolved, here: str) -> list[dict[str, Any]]:
    """The rows of *Changed in*, oldest first: each range links to the line that describes it, or to the metric's
    history page, which shows it in full, when no line does."""
    rows = []
    for row in res.history:
        href = None
        if row.line is not None and not row.current:
            href = f"{paths.line_path(view.config, row.line)}{view.lang.prefix}{paths.folder(here)}"
        var = res.source.variants[row.variant]
        detail = None
        if row.detail:
            detail = {"var": var, "call": example_call(var.snippet) if var.snippet else None,
                      "anchor": f"changed-{row.start.replace('.', '-')}"}
        rows.append({"row": row, "href": href, "detail": detail})
    return rows


def _newest_with(view: View, trainer: TrainerEdition) -> str:
    """The release of the newest line that shows the trainer: what "the latest release" means on its pages (a
    removed trainer's latest is the last line that has it, not the site's latest)."""
    return view.atlas.editions_with(trainer.id)[0].line.trl


def render_metric(view: View, trainer: TrainerEdition, res: Resolved) -> str:
    m = res.metric
    here = paths.metric_doc(m)
    related = [{"key": r.metric.key, "summary": r.metric.summary, "href": paths.rel(here, paths.metric_doc(r.metric))}
               for ref in m.related if (r := view.edition.metric(ref)) is not None]
    call, expected = example_call(m.snippet)
    history = _history(view, res, here)
    english = view.english_url(here)
    explainers = [{"title": e.model.title, "href": paths.rel(here, paths.explainer_doc(e.model))}
                  for e in trainer.explainers_of(res.id)]
    md = MARKDOWN.get_template("metric.md.j2").render(**view.base(
        m=m, res=res, base=res.source, history=history, link_md=link_md, cls=trainer.cls, related=related,
        explainers=explainers, check_href=paths.rel(here, f"{paths.CHECK_PAGE}.md"),
        history_href=paths.rel(here, paths.history_doc(m)),
        call=call, expected=expected, latest_trl=_newest_with(view, trainer), terms=metric_terms(view, m, here),
        edit_url=view.edit_url(res.item.path),
        notice=lambda section: notice(view, res.item, section, english, res.variant, _details(history))))
    return link_terms(md, view.term_index, lambda e: entry_href(here, e),
                      skip_sections=("glossary", "related", "sources", "changed-in"))


def _details(history: list[dict[str, Any]]) -> list[int]:
    """The variants that the history page shows in full."""
    return [h["row"].variant for h in history if h["detail"]]


def render_metric_history(view: View, res: Resolved) -> str | None:
    """The history page of a metric: the ranges of its *Changed in* table that no line describes, each in full
    (meaning, formula, reference implementation, reductions, logging); None when every range has a line."""
    m = res.metric
    here = paths.history_doc(m)
    history = _history(view, res, paths.metric_doc(m))
    if not (details := _details(history)):
        return None
    english = view.english_url(here)
    return MARKDOWN.get_template("metric_history.md.j2").render(**view.base(
        m=m, history=history, metric_href=paths.rel(here, paths.metric_doc(m)), edit_url=view.edit_url(res.item.path),
        notice=lambda section: notice(view, res.item, section, english, res.variant, details)))
