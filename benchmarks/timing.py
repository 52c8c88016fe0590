"""What every benchmark shares: a timer, and medians printed with their runs. Run the benchmarks with the
project's interpreter (`.venv/bin/python benchmarks/<name>.py`), where the generator is installed."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def runs(fn: Callable[[], object], n: int) -> list[float]:
    """Seconds of ``n`` calls of ``fn``."""
    return [timed(fn) for _ in range(n)]


def median(times: list[float]) -> float:
    return statistics.median(times)


def shown(times: list[float]) -> str:
    """``1.23 s (runs: 1.20, 1.23, 1.31)``."""
    return f"{median(times):.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)})"
