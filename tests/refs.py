"""The code refs a metric file holds, with where each one is in the file (shared by the tests that check them)."""

from __future__ import annotations

from generator.schema import Correction, Metric, SourceRef

Loc = tuple[str | int, ...]


def corrections_of(m: Metric) -> list[tuple[Loc, Correction]]:
    """The page's corrections and every variant's, each with its place in the file."""
    return [(("corrections", i), c) for i, c in enumerate(m.corrections)] + [
        (("variants", j, "corrections", i), c)
        for j, var in enumerate(m.variants) for i, c in enumerate(var.corrections or [])
    ]


def code_refs(m: Metric) -> list[tuple[Loc, SourceRef]]:
    """Every code ref in a metric file (sources and corrections, the page's own and its variants'), each with its
    place in the file."""
    links = [(("sources", i), link) for i, link in enumerate(m.sources)] + [
        (("variants", j, "sources", i), link)
        for j, var in enumerate(m.variants) for i, link in enumerate(var.sources or [])
    ]
    refs = [(loc + ("ref",), link.ref) for loc, link in links if link.ref]
    for loc, c in corrections_of(m):
        refs += [(loc + ("source",), c.source)] + [(loc + ("also_at", k), r) for k, r in enumerate(c.also_at)]
    return refs
