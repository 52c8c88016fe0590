"""A metric in one TRL release: the one walk over its variants, and its fields as that release logs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..read.load import Loaded
from ..read.metric import OVERRIDABLE, Correction, Metric
from .releases import in_range, release_key

Loc = tuple[str | int, ...]

# What the *Changed in* section of a page shows, in full, of a range of releases that no site line describes: a
# reader of such a release finds the older meaning, formula, reference code, reductions and logging conditions
# there. Any other replacement in such a range would be shown nowhere.
HISTORY = ("meaning", "formula", "snippet", "aggregation", "logged_when")


def each(m: Any, name: str) -> list[tuple[Loc, Any, int | None]]:
    """The page's own field ``name`` and every variant's replacement of it, each with its place in the file and
    the variant's index (None for the page's own), leaving out what is not given: the one walk over a metric's
    variants (an explainer, which has none, gives its own field)."""
    out: list[tuple[Loc, Any, int | None]] = [((name,), getattr(m, name), None)] if getattr(m, name) is not None \
        else []
    out += [(("variants", i, name), getattr(var, name), i)
            for i, var in enumerate(getattr(m, "variants", [])) if getattr(var, name, None) is not None]
    return out


def span(m: Metric, index: int | None) -> tuple[str, str | None]:
    """The releases [from, to) of variant ``index``, or the metric's whole life (None)."""
    if index is None:
        return m.since, m.until
    var = m.variants[index]
    return var.from_, var.to or m.until


def variant_at(m: Metric, release: str) -> int | None:
    """The index of the variant whose range holds ``release`` (None when the metric never changed)."""
    return next((i for i in range(len(m.variants)) if in_range(release, *span(m, i))), None)


def exists_in(m: Metric, release: str) -> bool:
    return in_range(release, m.since, m.until)


def cited(c: Correction, release: str, start: str, end: str | None) -> Correction:
    """``c`` citing, among its refs, the one of ``release``, else the newest in [start, end), else its own."""
    inside = [r for r in (c.source, *c.also_at) if r.package == "trl" and in_range(r.version, start, end)]
    best = max(inside, key=lambda r: (r.version == release, release_key(r.version)), default=None)
    return c.model_copy(update={"source": best}) if best else c


@dataclass(frozen=True)
class Resolved:
    """A metric as TRL ``release`` logged it: its fields with that range's replacements applied, where each field
    came from in the file, and (filled in by the edition) the rows of its *Changed in* section."""

    item: Loaded  # the source file (for edit links and error lines)
    metric: Metric
    variant: int | None  # index of the range the release falls in (None when the metric never changed)
    logged_as: str  # the key TRL logged in that release
    origin: dict[str, Loc]  # field (but `variants`) -> where the page's value of it is in the file
    history: tuple[Any, ...] = field(default=(), compare=False)

    @property
    def id(self) -> str:
        return self.metric.id

    @property
    def source(self) -> Metric:
        """The metric as written in its file (every range)."""
        return self.item.model

    @property
    def releases(self) -> tuple[str, str | None]:
        """The releases [from, to) the page is exact for: its variant's range, or the metric's whole life."""
        return span(self.source, self.variant)

    @property
    def differs_from_latest(self) -> bool:
        return any(loc[0] == "variants" for loc in self.origin.values())

    @property
    def change(self) -> Any:
        """The one-sentence `change` of the range shown (None when the metric never changed)."""
        return None if self.variant is None else self.source.variants[self.variant].change


def resolve(item: Loaded, release: str) -> Resolved | None:
    """The metric of ``item`` as logged by TRL ``release``, or None when that release does not log it."""
    m: Metric = item.model
    if not exists_in(m, release):
        return None
    index = variant_at(m, release)
    var = None if index is None else m.variants[index]
    origin: dict[str, Loc] = {name: (name,) for name in type(m).model_fields if name != "variants"}
    updates: dict[str, Any] = {}
    for name in OVERRIDABLE:
        if var is not None and getattr(var, name) is not None:
            updates[name] = getattr(var, name)
            origin[name] = ("variants", index, name)
    start, end = span(m, index)
    updates["corrections"] = [cited(c, release, start, end) for c in updates.get("corrections", m.corrections)]
    logged_as = var.logged_as if var is not None and var.logged_as else m.key
    return Resolved(item, m.model_copy(update=updates), index, logged_as, origin)
