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


# How `atlas doctor` and its training callback read a rule when a field is left out (the pages say it in words)
FOR_LOGS = 3  # a comparison holds on this many consecutive logged values (a single spike is not a finding)
RANGE_FOR_LOGS = 10  # a curve is outside its healthy range for this many consecutive logged values
TREND_WINDOW = 20  # a trend is measured over windows of this many consecutive logged values
TREND_CHANGE = 0.2  # ... between the medians of a window's two halves, as a share of the larger of the two levels
NOISE = 3.0  # ... and by more than this many standard deviations of the noise (from the step-to-step changes)
TREND_HOLDS = 4  # ... in every window starting within a quarter of a window (one window that fires is not a trend)

Scalar = float | bool | str


class Condition(Strict):
    """Where a red flag applies. Exactly one of: a setting of the run (`setting` with `op` and `value`), a key the
    run logs at all (`logged`), or another key's value at the same logged step (`key` with `op`, and `value`
    except for `nan`)."""

    setting: Annotated[str, Field(pattern=IDENT)] | None = Field(
        None, description="A field of the trainer's configuration class, e.g. `beta`: read from the run's "
                          "configuration (the callback, `atlas doctor --config/--set`), else the release's default "
                          "when the trainer file lists it under `crucial`.")
    logged: Annotated[str, Field(pattern=KEY_PATTERN)] | None = Field(
        None, description="A key of the same trainer that the run logs (the logs reveal a setting: `kl` is logged "
                          "only with `beta` != 0). `{name}` stands for the name of the flagged key.")
    key: Annotated[str, Field(pattern=KEY_PATTERN)] | None = Field(
        None, description="A key of the same trainer whose value at the same logged step is compared.")
    op: Literal["==", "!=", ">", ">=", "<", "<=", "in", "not_in", "nan"] | None = None
    value: Scalar | list[Scalar] | None = Field(None, description="What `op` compares with (a list for in/not_in).")


class RedFlag(Strict):
    op: Literal[">", ">=", "<", "<=", "==", "!=", "nan", "rising", "falling"]
    value: float | None = Field(None, description="Threshold for comparison ops; unused for nan/rising/falling.")
    text: Text
    for_logs: int | None = Field(
        None, ge=1, description=f"Comparisons and nan: how many consecutive logged values must hold it (default "
                                f"{FOR_LOGS}, 1 for nan).")
    window: int | None = Field(
        None, ge=4, description=f"rising/falling: the number of consecutive logged values the trend is measured "
                                f"over (default {TREND_WINDOW}).")
    change: float | None = Field(
        None, gt=0, description=f"rising/falling: how far the median of the window's second half must move from "
                                f"the first half's, as a share of the larger of the two (default {TREND_CHANGE}); "
                                f"it must also move by more than {NOISE:g} standard deviations of the noise, in "
                                f"the windows starting over 1/{TREND_HOLDS} of a window in a row.")
    when: list[Condition] = Field([], description="Conditions that must all hold as well (settings, logged keys, "
                                                  "other keys at the same step).")
    troubleshooting: int | None = Field(
        None, ge=1, description="The troubleshooting item (1-based) whose actions treat this flag; the first by "
                                "default.")


class Healthy(Strict):
    bounds: Bounds = Field(description="What the maths allows; a value outside is a bug, not a symptom.")
    range: Bounds | None = Field(None, description="Where a healthy run usually sits; null if task-dependent.")
    trend: Literal["rising", "falling", "flat", "stable", "any"]
    red_flags: list[RedFlag] = []
    text: Text


class Troubleshoot(Strict):
    symptom: Text
    group: Annotated[str, Field(pattern=IDENT)] | None = Field(
        None, description="The symptom group of the site's symptom index (`symptom_group_<group>` in the UI "
                          "strings), e.g. `reward_flat`.")
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
