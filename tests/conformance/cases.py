"""What the conformance tests are parametrized over: every trainer with a package in ``trainers/`` on every release
line that shows it (``real_atlas().editions``). Built when pytest collects, never at import time."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import pytest

from generator.resolve.edition import Edition, TrainerEdition

from ..conftest import real_atlas
from .trainers import package, trainer_ids


@dataclass(frozen=True)
class TrainerLine:
    """A trainer with a package here, on one release line."""

    edition: Edition
    te: TrainerEdition

    @property
    def trainer(self) -> str:
        return self.te.id

    @property
    def release(self) -> str:
        return self.edition.release

    @property
    def package(self) -> ModuleType:
        return package(self.trainer)

    @property
    def id(self) -> str:
        return f"{self.trainer}:{self.release}"


def trainer_lines(trainer: str | None = None) -> list[TrainerLine]:
    """Every (trainer, line) to test, newest line first; only ``trainer``'s when given."""
    ids = trainer_ids()
    return [TrainerLine(e, t) for e in real_atlas().editions for t in e.trainers
            if t.id in ids and trainer in (None, t.id)]


def latest(trainer: str) -> TrainerLine:
    """The newest line that shows ``trainer``."""
    return trainer_lines(trainer)[0]


def uses(trainer: str, *releases: str) -> list[pytest.MarkDecorator]:
    """The marks of a test that reads these releases' recorded runs of ``trainer``: the session records them
    (conftest.py), and the test joins the first release's pytest-xdist group (``--dist loadgroup``)."""
    return [pytest.mark.records(trainer, *releases), pytest.mark.xdist_group(f"{trainer}-trl-{releases[0]}")]
