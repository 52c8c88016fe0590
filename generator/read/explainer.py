"""The typed contract of ``metrics/<trainer>/explainers/<id>.yaml``: a page that explains what several keys share
or how they differ (two entropies, two KLs, a controller behind a coefficient), with its own worked example."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .metric import Formula, Link, Snippet
from .text import IDENT, RELEASE, Strict, Text


class Explainer(Strict):
    """One explainer page of a trainer, shown on every line whose release has the trainer and lies in
    [since, until)."""

    id: str = Field(pattern=IDENT, description="Its file name, and its page under `<trainer>/explainers/`.")
    trainer: str = Field(pattern=IDENT)
    order: int = Field(0, description="Position among the trainer's explainers.")
    title: Text
    summary: Text = Field(description="One line: what the page explains (lists, search results, the metric pages).")
    body: Text = Field(description="The explanation, in Markdown.")
    formula: Formula | None = None
    snippet: Snippet | None = Field(None, description="Code that computes the keys it explains from the same tensors; "
                                                      "its worked example is run by `atlas check` and the tests.")
    metrics: list[str] = Field(min_length=1, description="The metrics it explains, as `trainer/key`: their pages "
                                                         "link to it.")
    sources: list[Link] = Field(min_length=1)
    since: Annotated[str, Field(pattern=RELEASE)] | None = Field(
        None, description="First release it describes (null: the trainer's first).")
    until: Annotated[str, Field(pattern=RELEASE)] | None = Field(
        None, description="First release it no longer describes (null: as long as the trainer exists).")

    @property
    def slug(self) -> str:
        return f"explainers/{self.id}"
