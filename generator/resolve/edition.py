"""Editions: every release line of the site resolved once, and immutable. Pages, cheat-sheets, the JSON index and
the status pages of a line are all rendered from its edition; nothing re-resolves a metric."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..read.config import Config, Line
from ..read.load import Loaded
from ..read.trainer import Category, Crucial, Default, Trainer, TrainerClass
from .releases import in_range
from .variants import HISTORY, Loc, Resolved, resolve, span

# the fields of a variant that every page of its metric shows, in the *Changed in* table
ROW = ("from", "to", "change", "source", "logged_as")


@dataclass(frozen=True)
class HistoryRow:
    """One range of a metric's releases, as its *Changed in* section lists it."""

    variant: int
    start: str
    end: str | None
    change: Any  # Text
    source: Any  # Link
    logged_as: str | None
    line: Line | None  # the line whose pages describe this range (None: no line does)
    current: bool  # the range of the page this row is on

    @property
    def detail(self) -> bool:
        """No line describes the range: the section shows what it held in full."""
        return self.line is None


@dataclass(frozen=True)
class _OfTrainer:
    item: Loaded  # trainer.yaml

    @property
    def trainer(self) -> Trainer:
        return self.item.model

    @property
    def id(self) -> str:
        return self.trainer.id


@dataclass(frozen=True)
class TrainerEdition(_OfTrainer):
    """A trainer on one line: its class in that release and its metrics in index order."""

    cls: TrainerClass
    metrics: tuple[Resolved, ...]  # by category, then `order`, then key
    defaults: tuple[tuple[Crucial, Default], ...]  # the crucial settings with their default in that release
    explainers: tuple[Loaded, ...] = ()  # its explainer pages that describe the release, in `order`

    def categories(self) -> list[tuple[Category, list[Resolved]]]:
        """The categories that hold a metric on this line, in reading order, with their metrics."""
        return [(c, [r for r in self.metrics if r.metric.category == c.id]) for c in self.trainer.categories
                if any(r.metric.category == c.id for r in self.metrics)]

    def explainers_of(self, metric_id: str) -> list[Loaded]:
        """The explainers of this line that explain the metric."""
        return [e for e in self.explainers if metric_id in e.model.metrics]

    def sheet(self) -> list[Resolved]:
        """The metrics on the trainer's cheat-sheet, in reading order (empty: no sheet)."""
        on = [r for r in self.metrics if r.metric.cheatsheet is not None]
        return sorted(on, key=lambda r: (r.metric.cheatsheet.order, r.metric.key))


@dataclass(frozen=True)
class Removed(_OfTrainer):
    """A trainer that TRL removed before a line's release: that line points its readers to the last line that has
    it."""

    last: Line  # the newest line whose release still has it


@dataclass(frozen=True)
class Edition:
    """Everything the site shows for one release line."""

    line: Line
    lines: tuple[Line, ...]  # every line of the site, newest first
    trainers: tuple[TrainerEdition, ...]  # in `order`
    removed: tuple[Removed, ...]  # trainers removed before this line's release, in `order`
    glossary: tuple[Loaded, ...]

    @property
    def release(self) -> str:
        return self.line.trl

    @property
    def latest(self) -> Line:
        return self.lines[0]

    @cached_property
    def metrics(self) -> list[Resolved]:
        """Every metric of the line, in the order of their files."""
        return sorted((r for t in self.trainers for r in t.metrics), key=lambda r: r.item.path)

    def metric(self, metric_id: str) -> Resolved | None:
        return next((r for r in self.metrics if r.id == metric_id), None)

    def trainer(self, trainer_id: str) -> TrainerEdition:
        return next(t for t in self.trainers if t.id == trainer_id)


def _class_at(trainer: Trainer, release: str) -> TrainerClass | None:
    return next((c for c in trainer.classes if in_range(release, c.from_, c.to)), None)


def _index_order(trainer: Trainer, metrics: list[Resolved]) -> tuple[Resolved, ...]:
    order = {c: i for i, c in enumerate(trainer.category_ids())}
    return tuple(sorted(metrics, key=lambda r: (order.get(r.metric.category, len(order)), r.metric.order,
                                                r.metric.key)))


def _history(res: Resolved, lines: Sequence[Line]) -> tuple[HistoryRow, ...]:
    m = res.source
    rows = []
    for i, var in enumerate(m.variants):
        start, end = span(m, i)
        line = next((ln for ln in lines if in_range(ln.trl, start, end)), None)
        rows.append(HistoryRow(i, start, end, var.change, var.source, var.logged_as, line, i == res.variant))
    return tuple(rows)


def _explainers(explainers: list[Loaded], trainer: Trainer, release: str) -> tuple[Loaded, ...]:
    on = [e for e in explainers if e.model.trainer == trainer.id
          and in_range(release, e.model.since or trainer.since, e.model.until)]
    return tuple(sorted(on, key=lambda e: (e.model.order, e.model.id)))


def editions(config: Config, trainers: Iterable[Loaded], metrics: Iterable[Loaded], glossary: Iterable[Loaded],
             explainers: Iterable[Loaded] = ()) -> tuple[Edition, ...]:
    """One edition per line of ``config``, newest first. Metrics of a trainer without a valid trainer file are left
    out (`check` reports them)."""
    trainers = sorted(trainers, key=lambda t: (t.model.order, t.model.id))
    metrics, glossary, lines, explainers = list(metrics), tuple(glossary), tuple(config.versions), list(explainers)
    shown: dict[str, tuple[TrainerEdition, ...]] = {}
    for line in lines:
        on_line = []
        for t in trainers:
            cls = _class_at(t.model, line.trl)
            found = [res for it in metrics if it.model.trainer == t.model.id and (res := resolve(it, line.trl))]
            if cls is None or not found:
                continue
            found = [replace(res, history=_history(res, lines)) for res in found]
            defaults = tuple((c, d) for c in t.model.crucial for d in c.defaults if in_range(line.trl, d.from_, d.to))
            on_line.append(TrainerEdition(t, cls, _index_order(t.model, found), defaults,
                                          _explainers(explainers, t.model, line.trl)))
        shown[line.name] = tuple(on_line)
    out = []
    for line in lines:
        removed = []
        for t in trainers:
            until = t.model.until
            if until is None or not in_range(line.trl, until, None):
                continue
            last = next((ln for ln in lines if any(te.id == t.model.id for te in shown[ln.name])), None)
            if last is not None:
                removed.append(Removed(t, last))
        out.append(Edition(line, lines, shown[line.name], tuple(removed), glossary))
    return tuple(out)


def shown(edition: Edition) -> set[tuple[str, Loc]]:
    """Every place in the sources whose content some page or cheat-sheet of ``edition`` shows, as (file, location
    of a field): the fields a page takes from its file, every variant's row of *Changed in* and, for a range that
    no line describes, what *Changed in* shows of it in full; the trainer's file; the whole glossary."""
    out: set[tuple[str, Loc]] = {(it.path, ()) for it in edition.glossary}
    for t in edition.trainers:
        path = t.item.path
        out |= {(path, (name,)) for name in ("id", "title", "order", "classes", "intro", "strip", "evaluation",
                                             "crucial")}
        ids = [c.id for c, _ in t.categories()]
        out |= {(path, ("categories", i)) for i, c in enumerate(t.trainer.categories) if c.id in ids}
        for res in t.metrics:
            out |= _shown_by_page(res)
        out |= {(e.path, ()) for e in t.explainers}
    out |= {(gone.item.path, ("title",)) for gone in edition.removed}
    return out


def _shown_by_page(res: Resolved) -> set[tuple[str, Loc]]:
    path = res.item.path
    out = {(path, loc) for name, loc in res.origin.items() if name != "conformance"}
    conformance = res.origin["conformance"]
    out.add((path, conformance if not res.metric.conformance.checked else conformance + ("checked",)))
    for row in res.history:
        out |= {(path, ("variants", row.variant, name)) for name in ROW}
        if row.detail:
            out |= {(path, ("variants", row.variant, name)) for name in HISTORY}
    return out
