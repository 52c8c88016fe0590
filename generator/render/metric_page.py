"""The page of one metric, as the edition's release logs it."""

from __future__ import annotations

import json
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


def _tensor(value: Any, dtype: str) -> str:
    return f"torch.tensor({json.dumps(value).replace('NaN', 'nan')}{dtype})"


def example_call(snippet: Snippet) -> tuple[str, str]:
    """The worked example as a runnable call, and its expected result."""
    ex = snippet.example
    args = []
    for name, spec in ex.inputs.items():
        if isinstance(spec, Tensor):
            dtype = f", dtype=torch.{spec.dtype}" if spec.dtype != "float32" else ""
            if spec.list:
                args.append(f"    {name}=[{', '.join(_tensor(v, dtype) for v in spec.value)}],")
            else:
                args.append(f"    {name}={_tensor(spec.value, dtype)},")
        else:
            args.append(f"    {name}={_py(spec)},")
    call = f"{snippet.function}(\n" + "\n".join(args) + "\n)"
    if "nan" in call:
        call = "nan = float('nan')\n" + call
    expected = "None / NaN" if ex.expected is None else repr(ex.expected)
    return call, expected


def link_md(link: Link) -> str:
    return f"[{link.title}]({link.url})" if link.url else link.title


def _history(view: View, res: Resolved, here: str) -> list[dict[str, Any]]:
    """The rows of *Changed in*, oldest first: each range links to the line that describes it, or is shown in full
    below the table when no line does."""
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


def render_metric(view: View, trainer: TrainerEdition, res: Resolved) -> str:
    m = res.metric
    here = paths.metric_doc(m)
    related = [{"key": r.metric.key, "summary": r.metric.summary, "href": paths.rel(here, paths.metric_doc(r.metric))}
               for ref in m.related if (r := view.edition.metric(ref)) is not None]
    call, expected = example_call(m.snippet)
    history = _history(view, res, here)
    details = [h["row"].variant for h in history if h["detail"]]
    english = view.english_url(here)
    explainers = [{"title": e.model.title, "href": paths.rel(here, paths.explainer_doc(e.model))}
                  for e in trainer.explainers_of(res.id)]
    md = MARKDOWN.get_template("metric.md.j2").render(**view.base(
        m=m, res=res, base=res.source, history=history, link_md=link_md, cls=trainer.cls, related=related,
        explainers=explainers, check_href=paths.rel(here, f"{paths.CHECK_PAGE}.md"),
        call=call, expected=expected, latest_trl=view.edition.latest.trl, terms=metric_terms(view, m, here),
        edit_url=view.edit_url(res.item.path),
        notice=lambda section: notice(view, res.item, section, english, res.variant, details)))
    return link_terms(md, view.term_index, lambda e: entry_href(here, e),
                      skip_sections=("glossary", "related", "sources", "changed-in"))
