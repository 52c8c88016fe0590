"""A run's logged history, whatever file it came from: per key, the logged steps and values (NaN where TRL wrote
None or NaN), and the one error type for input the doctor cannot read (one line naming the file and the problem)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

# What Hugging Face's Trainer writes besides a trainer's metrics: the step itself and the summary `train()` logs at
# its end. They are bookkeeping, neither checked nor "unknown".
BOOKKEEPING = frozenset({"step", "global_step", "epoch_step", "train_runtime", "train_samples_per_second",
                         "train_steps_per_second", "total_flos", "train_loss"})
EVAL_PREFIX = "eval_"


class BadInput(Exception):
    """Input the doctor cannot read: printed as its one line, ``path: problem``."""

    def __init__(self, path: object, problem: str):
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}: {problem}")


def normalise(key: str) -> str | None:
    """The key as TRL logged it, from the name a logger gave it: W&B and TensorBoard write ``train/loss`` and
    ``eval/loss`` for ``loss`` and ``eval_loss``; names starting with ``_`` are W&B's own (None)."""
    if key.startswith("_"):
        return None
    if key.startswith("train/"):
        return key[len("train/"):]
    if key.startswith("eval/"):
        return EVAL_PREFIX + key[len("eval/"):]
    return key


def number(value: object) -> float | None:
    """A logged value as a float: None and NaN are NaN; anything that is not a number (text, a histogram) is
    None, i.e. not a scalar to check."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class Series:
    steps: np.ndarray  # int64, increasing
    values: np.ndarray  # float64, NaN where TRL wrote None or NaN

    def at(self, steps: np.ndarray) -> np.ndarray:
        """The values at ``steps`` (NaN where this key was not logged at that step)."""
        idx = np.searchsorted(self.steps, steps)
        idx_ok = np.minimum(idx, len(self.steps) - 1)
        hit = (idx < len(self.steps)) & (self.steps[idx_ok] == steps) if len(self.steps) else np.zeros(
            len(steps), bool)
        return np.where(hit, self.values[idx_ok] if len(self.steps) else np.nan, np.nan)


@dataclass
class History:
    """Everything logged, by key; ``source``: the file or folder, ``kind``: its format in words."""

    source: str
    kind: str
    series: dict[str, Series] = field(default_factory=dict)
    eval_keys: list[str] = field(default_factory=list)
    bookkeeping: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return sorted(self.series)

    @property
    def steps(self) -> np.ndarray:
        """Every step at which some key was logged."""
        if not self.series:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate([s.steps for s in self.series.values()]))


def from_rows(source: str, kind: str, rows: Iterable[tuple[int, Mapping[str, object]]]) -> History:
    """A history from ``(step, {key: value})`` rows in logging order (keys as the logger named them). A key logged
    twice at one step keeps its last value; an empty history is `BadInput`."""
    columns: dict[str, tuple[list[int], list[float]]] = {}
    target: dict[str, tuple[list[int], list[float]] | None] = {}  # the logger's name -> its column (None: no metric)
    evals: set[str] = set()
    books: set[str] = set()
    for step, row in rows:
        step = int(step)
        for raw, value in row.items():
            try:
                column = target[raw]
            except KeyError:
                key = _metric_key(raw, evals, books)
                column = target[raw] = None if key is None else columns.setdefault(key, ([], []))
            if column is None:
                continue
            x = value if type(value) is float else number(value)
            if x is not None:
                column[0].append(step)
                column[1].append(x)
    series = {}
    for key, (steps, values) in columns.items():
        if not steps:
            continue
        s, v = np.asarray(steps, np.int64), np.asarray(values, np.float64)
        order = np.argsort(s, kind="stable")
        s, v = s[order], v[order]
        last = np.append(s[1:] != s[:-1], True)  # a step logged twice keeps its last value
        series[key] = Series(s[last], v[last])
    if not series:
        raise BadInput(source, "the history is empty: no logged training metric" + (
            f" (only evaluation keys such as {sorted(evals)[0]})" if evals else ""))
    return History(source, kind, series, sorted(evals), sorted(books))


def _metric_key(raw: str, evals: set[str], books: set[str]) -> str | None:
    """The metric a logger's name stands for; bookkeeping and evaluation keys are noted and give None."""
    key = normalise(raw)
    if key is None:
        return None
    if key in BOOKKEEPING:
        books.add(key)
        return None
    if key.startswith(EVAL_PREFIX):
        evals.add(key)
        return None
    return key
