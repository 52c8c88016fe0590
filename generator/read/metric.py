"""The typed contract of a metric file. These models ARE the schema; `atlas schema` exports it as JSON Schema."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from .text import IDENT, RELEASE, Strict, Text

KEY_PATTERN = r"^[a-z_{}]+(/[a-z_{}]+)*$"


class Symbol(Strict):
    tex: str = Field(description="The symbol as it appears in the formula, in TeX.")
    meaning: Text


class Formula(Strict):
    tex: str = Field(description="Display formula in TeX (rendered with KaTeX at build time).")
    symbols: list[Symbol] = Field(min_length=1, description="Every symbol of the formula, explained.")


class Tensor(Strict):
    value: Any = Field(description="Nested lists (a tensor), or a list of nested lists when `list: true`.")
    dtype: Literal["float32", "float64", "int64", "bool"] = "float32"
    list: bool = Field(False, description="A Python list of tensors (one per micro-batch / rank), not one tensor.")


class Example(Strict):
    inputs: dict[str, Tensor | float | int | bool | str | None] = Field(
        description="Keyword arguments of the function: tensors as {value, dtype}, plain values as is."
    )
    expected: float | list[float | None] | None = Field(
        description="What the function returns (one number, or one per item); null means NaN/None.")
    atol: float = Field(1e-6, ge=0)
    explanation: Text = Field(description="How a person checks `expected` by hand.")


class Snippet(Strict):
    function: Annotated[str, Field(pattern=IDENT)] = Field(description="Name of the function the code defines.")
    code: str = Field(description="Self-contained PyTorch code defining `function`.")
    example: Example


class AggregationStep(Strict):
    level: Literal["token", "sequence", "group", "micro_batch", "generation_batch", "optimizer_step",
                   "logging_window", "processes"]
    reduction: str = Field(description="Short code-like name of the reduction, e.g. `masked_mean`, `nanmin`.")
    detail: Text


class ConfigFlag(Strict):
    name: str = Field(description="The TRL config field, e.g. `beta`.")
    default: str = Field(description="Its default in this TRL version, as Python source.")
    effect: Text


class LoggedWhen(Strict):
    always: bool
    condition: Text
    config: list[ConfigFlag] = []


class Bounds(Strict):
    min: float | None = None
    max: float | None = None


class RedFlag(Strict):
    op: Literal[">", ">=", "<", "<=", "==", "!=", "nan", "rising", "falling"]
    value: float | None = Field(None, description="Threshold for comparison ops; unused for nan/rising/falling.")
    text: Text


class Healthy(Strict):
    bounds: Bounds = Field(description="What the maths allows; a value outside is a bug, not a symptom.")
    range: Bounds | None = Field(None, description="Where a healthy run usually sits; null if task-dependent.")
    trend: Literal["rising", "falling", "flat", "stable", "any"]
    red_flags: list[RedFlag] = []
    text: Text


class Troubleshoot(Strict):
    symptom: Text
    causes: list[Text] = Field(min_length=1)
    actions: list[Text] = Field(min_length=1)


class SourceRef(Strict):
    package: Literal["trl", "transformers", "accelerate"] = Field(
        "trl", description="The package whose code this points to (TRL by default).")
    file: str = Field(description="Path inside the package, e.g. `trl/trainer/grpo_trainer.py`.")
    line: int = Field(ge=1)
    version: str = Field(description="Release of that package the line number refers to.")


class Correction(Strict):
    claim: Text = Field(description="What TRL's docs (or common lore) say.")
    fact: Text = Field(description="What the code does.")
    source: SourceRef
    also_at: list[SourceRef] = Field(
        [], description="The same code in other releases, so that each version's page links to a release it "
                        "describes (the page cites the one of its own release, else the newest in its range).")
    docs: str | None = Field(None, description="Where the claim is, e.g. `docs/source/grpo_trainer.md`.")


class Link(Strict):
    title: str
    url: str | None = None
    ref: SourceRef | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://", v):
            raise ValueError("must be an http(s) URL")
        return v


class Namesake(Strict):
    library: str
    key: str
    note: Text


class Conformance(Strict):
    checked: bool = Field(description="True when a test reproduces TRL's logged value with the snippet.")
    reason: Text | None = Field(None, description="Why not, when `checked` is false.")


class CheatsheetEntry(Strict):
    """Puts a metric on its trainer's printable one-page cheat-sheet."""

    order: int = Field(ge=1, description="Position on the sheet: the order in which to read the curves.")
    short: Text = Field(description="What the curve tells you, in a few words (fits one line of the sheet).")
    show_formula: bool = Field(False, description="Print the formula on the sheet (only for the few that matter).")
    first_try: Text | None = Field(
        None, description="What to try first, as printed (at most 90 columns; a CJK character takes 2). By default "
                          "the first action of the first troubleshooting item, cut at a clause end to fit.")


class Rename(Strict):
    key: str = Field(description="The key TRL logged before it was renamed to this one.")
    until: Annotated[str, Field(pattern=RELEASE)] = Field(description="First release that logs the new name.")


class Variant(Strict):
    """What a metric meant in one range of TRL releases, [from, to). Any field given here replaces the page's own
    (which describe the newest range) for releases in the range; the newest range gives no replacements."""

    from_: Annotated[str, Field(pattern=RELEASE)] = Field(alias="from", description="First release of the range.")
    to: Annotated[str, Field(pattern=RELEASE)] | None = Field(
        description="First release after the range (null: up to `until`, i.e. still current).")
    change: Text = Field(description="One sentence: what holds in this range that differs from the next one.")
    source: Link = Field(description="The TRL change (PR or release) that starts or ends this range.")
    logged_as: str | None = Field(None, description="The key's name in this range, if it was renamed since.")
    summary: Text | None = None
    meaning: Text | None = None
    formula: Formula | None = None
    snippet: Snippet | None = None
    aggregation: list[AggregationStep] | None = None
    logged_when: LoggedWhen | None = None
    healthy: Healthy | None = None
    troubleshooting: Annotated[list[Troubleshoot], Field(min_length=1)] | None = None
    corrections: list[Correction] | None = None
    related: list[str] | None = Field(None, description="Other metrics as `trainer/key`.")
    sources: Annotated[list[Link], Field(min_length=1)] | None = Field(
        None, description="Links to the code of this range: `ref`s name a release inside it.")
    conformance: Conformance | None = None
    cheatsheet: CheatsheetEntry | None = Field(
        None, description="The sheet entry of this range, when what the curve tells you differs.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


OVERRIDABLE = ("summary", "meaning", "formula", "snippet", "aggregation", "logged_when", "healthy", "troubleshooting",
               "corrections", "related", "sources", "conformance", "cheatsheet")


class Metric(Strict):
    """One logged key of one trainer."""

    key: Annotated[str, Field(pattern=KEY_PATTERN)] = Field(description="The exact logged key.")
    trainer: Annotated[str, Field(pattern=IDENT)]
    category: Annotated[str, Field(pattern=IDENT)]
    order: int = Field(0, description="Position within its category on the index page.")
    title: Text
    summary: Text = Field(description="One line, shown in tables and search results.")
    meaning: Text
    formula: Formula
    snippet: Snippet
    aggregation: list[AggregationStep] = Field(min_length=1)
    logged_when: LoggedWhen
    healthy: Healthy
    troubleshooting: list[Troubleshoot] = Field(min_length=1)
    corrections: list[Correction] = []
    related: list[str] = Field([], description="Other metrics as `trainer/key`.")
    sources: list[Link] = Field(min_length=1)
    conformance: Conformance
    namesakes: list[Namesake] = []
    cheatsheet: CheatsheetEntry | None = Field(None, description="Set to put the metric on the cheat-sheet.")
    since: Annotated[str, Field(pattern=RELEASE)] = Field(description="First TRL release that logs this key.")
    until: Annotated[str, Field(pattern=RELEASE)] | None = Field(
        None, description="First TRL release that no longer logs it (null: still logged).")
    renamed_from: list[Rename] = []
    variants: list[Variant] = Field(
        [], description="Release ranges where the metric differed, oldest first, covering `since` up to `until`; "
                        "empty when it never changed.")

    @property
    def id(self) -> str:
        return f"{self.trainer}/{self.key}"

    @property
    def slug(self) -> str:
        """Page path under the trainer folder: the key with template braces dropped."""
        return self.key.replace("{", "").replace("}", "")
