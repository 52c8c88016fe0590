"""The code refs a metric file holds, with where each one is in the file (shared by the tests that check them)."""

from __future__ import annotations

from generator.read.metric import Correction, Metric, SourceRef
from generator.resolve.variants import each

Loc = tuple[str | int, ...]


def corrections_of(m: Metric) -> list[tuple[Loc, Correction]]:
    """The page's corrections and every variant's, each with its place in the file."""
    return [(loc + (i,), c) for loc, cs, _ in each(m, "corrections") for i, c in enumerate(cs)]


def code_refs(m: Metric) -> list[tuple[Loc, SourceRef]]:
    """Every code ref in a metric file (sources and corrections, the page's own and its variants'), each with its
    place in the file."""
    refs = [(loc + (i, "ref"), link.ref) for loc, links, _ in each(m, "sources") for i, link in enumerate(links)
            if link.ref]
    for loc, c in corrections_of(m):
        refs += [(loc + ("source",), c.source)] + [(loc + ("also_at", k), r) for k, r in enumerate(c.also_at)]
    return refs
