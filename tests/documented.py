"""The documented metrics and their snippets, for the property tests: the metrics indexed once per process, and each
snippet compiled once (a hypothesis test asks for its snippet in every example it draws)."""

from __future__ import annotations

from functools import cache
from typing import Any

from generator.check.snippets import compile_function

from .conftest import real_sources

compiled = cache(compile_function)  # the same code, function and file name give the same function


@cache
def _metrics() -> dict[str, Any]:
    return {it.model.id: it.model for it in real_sources().metrics}


def metric(metric_id: str) -> Any:
    """The metric of the sources; a property of a metric that was renamed or removed fails, never skips."""
    found = _metrics()
    assert metric_id in found, f"{metric_id} is no longer documented: move its property tests to its new key"
    return found[metric_id]


@cache
def snippet(metric_id: str, since: str | None = None) -> Any:
    """The function of the metric's newest snippet, or of the snippet of its variant whose range starts at ``since``."""
    m = metric(metric_id)
    s = m.snippet
    if since is not None:
        ranges = [v for v in m.variants if v.from_ == since]
        assert len(ranges) == 1, f"{metric_id}: no range of its variants starts at {since}"
        s = ranges[0].snippet
    assert s is not None, f"{metric_id}: the range from {since or 'its newest release'} has no snippet of its own"
    return compiled(s.code, s.function, metric_id)
