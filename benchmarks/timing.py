"""What every benchmark shares: a timer, medians printed with their runs, and the figures `make bench` collects
into benchmarks/README.md. Run the benchmarks with the project's interpreter (`.venv/bin/python
benchmarks/<name>.py`), where the generator is installed."""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Debian's Chromium, as the page-weight and search benchmarks launch it (no background or update traffic to count)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


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


def child_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(args: list[str], root: Path = ROOT) -> tuple[float, float]:
    """Run a command to completion: (wall seconds, CPU seconds of it and its children)."""
    cpu = child_cpu()
    start = time.perf_counter()
    subprocess.run(args, check=True, cwd=root, capture_output=True)
    return time.perf_counter() - start, child_cpu() - cpu


@dataclass
class Figure:
    """One measured figure against its target (``met`` None: no target, or not measurable here)."""

    target: str  # e.g. "1. full build"
    what: str
    value: str
    goal: str = ""
    met: bool | None = None


def options(doc: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", default=str(ROOT), help="the checkout to measure (default: this one)")
    parser.add_argument("--json", help="also write the figures to this file (for `make bench`)")
    return parser


def report(figures: list[Figure], json_path: str | None) -> None:
    for f in figures:
        mark = "" if f.met is None else (" [met]" if f.met else " [not met]")
        print(f"{f.target}: {f.what}: {f.value}" + (f" (target {f.goal})" if f.goal else "") + mark)
    if json_path:
        Path(json_path).write_text(json.dumps([asdict(f) for f in figures], ensure_ascii=False, indent=1),
                                   encoding="utf-8")


def python() -> str:
    return sys.executable
