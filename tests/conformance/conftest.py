"""The recorded runs of each (trainer, TRL release), made once per test session.

A trainer's runs of one release execute in a subprocess with that release's interpreter (``envs.py``,
``record.py``) and land in one file in a folder the whole session shares. As soon as a test asks for runs, the
recordings that the selected tests name (``@pytest.mark.records(trainer, release, ...)``, see ``cases.uses``) start
side by side in the background; ``tests.shared.once`` makes sure exactly one process of the session (pytest-xdist
workers included) records each, while the others wait for its file. This does not rely on ``--dist loadgroup``
keeping a release's tests on one worker (with pytest 9.2 and pytest-xdist 3.8 it does not: xdist sets
``item._nodeid``, which pytest 9 no longer reads).

Every test below this folder (a trainer package's own tests included) is marked ``conformance``, so that
``-m "not conformance"`` leaves out all that needs a real TRL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..shared import once, session_folder
from .driver import Run, load_runs
from .envs import EnvError, record_runs
from .trainers import package

NEEDED = pytest.StashKey[list[tuple[str, str]]]()
RUNS_FILE = "runs.pt"
HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "records(trainer, *releases): the recorded runs of the trainer the test reads")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.conformance)


def pytest_collection_finish(session: pytest.Session) -> None:
    needed: list[tuple[str, str]] = []
    for item in session.items:
        for mark in item.iter_markers("records"):
            trainer, *releases = mark.args
            needed += [(trainer, r) for r in releases if (trainer, r) not in needed]
    session.config.stash[NEEDED] = needed


class Recordings:
    """``get(trainer, release)``: every run of that trainer in that release by name, recorded by whichever process
    of the session comes first."""

    def __init__(self, factory: pytest.TempPathFactory):
        self.factory = factory
        self.loaded: dict[tuple[str, str], dict[str, Run]] = {}
        self.started: set[tuple[str, str]] = set()

    def _record(self, trainer: str, release: str):
        """The folder holding the runs file; blocks while another thread or process records it."""

        def make(folder):
            folder.mkdir(parents=True)
            record_runs(trainer, release, folder / RUNS_FILE)

        return once(self.factory, f"{trainer}-trl-{release}", make)

    def _background(self, trainer: str, release: str) -> None:
        try:
            self._record(trainer, release)
        except (Exception, pytest.fail.Exception):  # recorded by `once`: the tests that read the runs report it
            pass

    def start(self, needed: list[tuple[str, str]]) -> None:
        for pair in needed:
            if pair not in self.started:
                self.started.add(pair)
                threading.Thread(target=self._background, args=pair, daemon=True).start()

    def get(self, trainer: str, release: str) -> dict[str, Run]:
        if (trainer, release) not in self.loaded:
            try:
                folder = self._record(trainer, release)
            except (EnvError, OSError) as exc:
                pytest.fail(f"{trainer}, trl {release}: {exc}", pytrace=False)
            self.loaded[trainer, release] = load_runs(folder / RUNS_FILE, package(trainer).RECORDS)
        return self.loaded[trainer, release]


@pytest.fixture(scope="session")
def recorded(request, tmp_path_factory) -> Iterator[Callable[[str, str], dict[str, Run]]]:
    """``recorded(trainer, release)``: every run of that trainer in that TRL release, by name."""
    session_folder(tmp_path_factory)  # made here, before any thread asks for it
    recordings = Recordings(tmp_path_factory)
    recordings.start(request.config.stash.get(NEEDED, []))
    yield recordings.get
