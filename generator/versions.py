"""TRL releases as a dimension of the sources: which metrics exist in a release, and what they meant there."""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.version import Version as _V

from .errors import SourceError, did_you_mean
from .load import Loaded
from .schema import OVERRIDABLE, Correction, Metric, Variant
from .yamlsrc import dotted


def v(release: str) -> _V:
    return _V(release)


def in_range(release: str, start: str, end: str | None) -> bool:
    return v(start) <= v(release) and (end is None or v(release) < v(end))


@dataclass(frozen=True)
class Resolved:
    """A metric as it was in one release: its fields with that range's replacements applied."""

    metric: Metric
    variant: Variant | None  # the range the release falls in (None when the metric never changed)
    logged_as: str  # the key TRL logged in that release

    @property
    def releases(self) -> tuple[str, str | None]:
        """The releases [from, to) the page is exact for: its variant's range, or the metric's whole life."""
        if self.variant is None:
            return self.metric.since, self.metric.until
        return self.variant.from_, self.variant.to or self.metric.until

    @property
    def differs_from_latest(self) -> bool:
        return self.variant is not None and any(getattr(self.variant, f) is not None for f in OVERRIDABLE)


def exists_in(m: Metric, release: str) -> bool:
    return in_range(release, m.since, m.until)


def cited(c: Correction, release: str, start: str, end: str | None) -> Correction:
    """``c`` citing, among its refs, the one of ``release``, else the newest in [start, end), else its own."""
    inside = [r for r in (c.source, *c.also_at) if r.package == "trl" and in_range(r.version, start, end)]
    best = max(inside, key=lambda r: (r.version == release, v(r.version)), default=None)
    return c.model_copy(update={"source": best}) if best else c


def resolve(m: Metric, release: str) -> Resolved | None:
    """``m`` as logged by TRL ``release``, or None when that release does not log it."""
    if not exists_in(m, release):
        return None
    var = next((var for var in m.variants if in_range(release, var.from_, var.to or m.until)), None)
    res = Resolved(m, var, var.logged_as if var and var.logged_as else m.key)
    updates = {f: getattr(var, f) for f in OVERRIDABLE if var is not None and getattr(var, f) is not None}
    updates["corrections"] = [cited(c, release, *res.releases) for c in updates.get("corrections", m.corrections)]
    return replace(res, metric=m.model_copy(update=updates))


def check_ranges(item: Loaded, releases: list[str]) -> list[SourceError]:
    """Release names must be real; variants must tile [since, until) without gap or overlap, oldest first."""
    m = item.model
    errors: list[SourceError] = []

    def err(loc: tuple, message: str) -> None:
        errors.append(SourceError(item.path, item.doc.line_of(loc), dotted(loc), message))

    known = set(releases)

    def real(release: str | None, loc: tuple) -> bool:
        if release is None or release in known:
            return True
        err(loc, f"'{release}' is not a TRL release" + did_you_mean(release, releases))
        return False

    ok = real(m.since, ("since",)) & real(m.until, ("until",))
    for i, r in enumerate(m.renamed_from):
        real(r.until, ("renamed_from", i, "until"))
    for i, var in enumerate(m.variants):
        ok &= real(var.from_, ("variants", i, "from")) & real(var.to, ("variants", i, "to"))
    if not ok:
        return errors
    if m.until is not None and v(m.until) <= v(m.since):
        err(("until",), f"until {m.until} is not after since {m.since}")
    if not m.variants:
        return errors
    expected = m.since
    for i, var in enumerate(m.variants):
        loc = ("variants", i)
        end = var.to or m.until
        if v(var.from_) > v(expected):
            err(loc + ("from",), f"gap: releases {expected} to {var.from_} are in no variant")
        elif v(var.from_) < v(expected):
            err(
                loc + ("from",),
                f"overlap: range starting {var.from_} overlaps the previous one (which ends at {expected})",
            )
        if end is not None and v(end) <= v(var.from_):
            err(loc + ("to",), f"empty range: to {end} is not after from {var.from_}")
        if var.to is None and i != len(m.variants) - 1:
            err(loc + ("to",), "only the newest variant may leave `to` open")
        expected = end or expected
    last = m.variants[-1]
    if (last.to or m.until) != m.until:
        err(
            ("variants", len(m.variants) - 1, "to"),
            f"the newest variant must reach until ({m.until or 'open'}), not {last.to}",
        )
    if any(getattr(last, f) is not None for f in OVERRIDABLE):
        err(
            ("variants", len(m.variants) - 1), "the newest variant is the page itself: move its fields to the top level"
        )
    return errors
