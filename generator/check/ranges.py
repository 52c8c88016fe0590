"""Release ranges: every release named is a real TRL release, and ranges that describe a life (a metric's
variants, a trainer's classes, a setting's defaults) tile it without gap or overlap, oldest first."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SourceError, did_you_mean
from ..read.config import Config
from ..read.load import Loaded
from ..read.metric import OVERRIDABLE
from ..resolve.releases import release_key
from .text import err

Loc = tuple[str | int, ...]


class _Ranges:
    """Collects the errors of one file's release names and ranges."""

    def __init__(self, item: Loaded, releases: Sequence[str]):
        self.item, self.releases, self.known = item, list(releases), set(releases)
        self.errors: list[SourceError] = []

    def err(self, loc: Loc, message: str) -> None:
        self.errors.append(err(self.item.doc, loc, message))

    def real(self, release: str | None, loc: Loc) -> bool:
        if release is None or release in self.known:
            return True
        self.err(loc, f"'{release}' is not a TRL release" + did_you_mean(release, self.releases))
        return False

    def tile(self, spans: list[tuple[Loc, str, str | None]], start: str, end: str | None, what: str) -> None:
        """``spans`` [(location, from, to)], oldest first, cover [start, end) exactly; a `to` of None reaches
        ``end``."""
        expected = start
        for i, (loc, lo, hi) in enumerate(spans):
            stop = hi or end
            if release_key(lo) > release_key(expected):
                self.err(loc + ("from",), f"gap: releases {expected} to {lo} are in no {what}")
            elif release_key(lo) < release_key(expected):
                self.err(loc + ("from",), f"overlap: range starting {lo} overlaps the previous one "
                                          f"(which ends at {expected})")
            if stop is not None and release_key(stop) <= release_key(lo):
                self.err(loc + ("to",), f"empty range: to {stop} is not after from {lo}")
            if hi is None and i != len(spans) - 1:
                self.err(loc + ("to",), f"only the newest {what} may leave `to` open")
            expected = stop or expected
        if spans and (spans[-1][2] or end) != end:
            self.err(spans[-1][0] + ("to",), f"the newest {what} must reach until ({end or 'open'}), "
                                             f"not {spans[-1][2]}")


def check_metric_ranges(item: Loaded, releases: Sequence[str]) -> list[SourceError]:
    """A metric's release names are real; its variants tile [since, until), the newest giving no replacement."""
    m = item.model
    r = _Ranges(item, releases)
    ok = r.real(m.since, ("since",)) & r.real(m.until, ("until",))
    for i, rename in enumerate(m.renamed_from):
        r.real(rename.until, ("renamed_from", i, "until"))
    for i, var in enumerate(m.variants):
        ok &= r.real(var.from_, ("variants", i, "from")) & r.real(var.to, ("variants", i, "to"))
    if not ok:
        return r.errors
    if m.until is not None and release_key(m.until) <= release_key(m.since):
        r.err(("until",), f"until {m.until} is not after since {m.since}")
    if not m.variants:
        return r.errors
    r.tile([(("variants", i), var.from_, var.to) for i, var in enumerate(m.variants)], m.since, m.until, "variant")
    if any(getattr(m.variants[-1], f) is not None for f in OVERRIDABLE):
        r.err(("variants", len(m.variants) - 1),
              "the newest variant is the page itself: move its fields to the top level")
    return r.errors


def check_trainer_ranges(item: Loaded, releases: Sequence[str]) -> list[SourceError]:
    """A trainer's classes tile its life; each crucial setting's defaults tile the same life."""
    t = item.model
    r = _Ranges(item, releases)
    ok = True
    spans = [(("classes", i), c.from_, c.to) for i, c in enumerate(t.classes)]
    for j, crucial in enumerate(t.crucial):
        spans += [(("crucial", j, "defaults", i), d.from_, d.to) for i, d in enumerate(crucial.defaults)]
    for loc, lo, hi in spans:
        ok &= r.real(lo, loc + ("from",)) & r.real(hi, loc + ("to",))
    if not ok:
        return r.errors
    r.tile(spans[:len(t.classes)], t.since, t.until, "class")
    for j, crucial in enumerate(t.crucial):
        r.tile([(("crucial", j, "defaults", i), d.from_, d.to) for i, d in enumerate(crucial.defaults)],
               t.since, t.until, "default")
    return r.errors


def check_lines(config: Config) -> list[SourceError]:
    """The site's lines name real releases, and their `covers` ranges leave no release without a line."""
    errors = []
    for i, line in enumerate(config.versions):
        for release in (line.trl, *[c for c in line.covers if c]):
            if release not in config.trl_releases:
                errors.append(SourceError("atlas.yml", 1, f"versions[{i}]", f"'{release}' is not a TRL release"))
    starts = {line.covers[0] for line in config.versions}
    for i, line in enumerate(config.versions):
        if line.covers[1] is not None and line.covers[1] not in starts:
            errors.append(SourceError("atlas.yml", 1, f"versions[{i}].covers",
                                      f"releases from {line.covers[1]} on are covered by no version"))
    return errors
