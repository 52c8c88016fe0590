"""A trainer package's own tests: one that takes ``release`` runs once per site line that shows the trainer (the
package's folder), and its ``runs`` fixture is that release's recorded runs by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cases import trainer_lines, uses
from ..driver import Run


def trainer_of(node) -> str:
    """The trainer whose package holds the test module: its folder, below ``trainers/``."""
    path = Path(node.module.__file__).resolve()
    return path.relative_to(Path(__file__).resolve().parent).parts[0]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "release" in metafunc.fixturenames:
        trainer = trainer_of(metafunc)
        releases = [tl.release for tl in trainer_lines(trainer)]
        metafunc.parametrize("release", [pytest.param(r, marks=uses(trainer, r), id=r) for r in releases])


@pytest.fixture
def runs(request, release: str, recorded) -> dict[str, Run]:
    return recorded(trainer_of(request), release)
