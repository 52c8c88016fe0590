"""The recorded runs of each (trainer, TRL release), made once per test session.

The runs of one release execute in one subprocess with that release's interpreter (``envs.py``, ``record.py``),
every trainer that the selected tests name (``@pytest.mark.records(trainer, release, ...)``, see ``cases.uses``) one
after another, each into its own file in a folder the whole session shares. As soon as a test asks for runs, the
releases' recordings start side by side in the background; ``tests.shared.once`` makes sure exactly one process of
the session (pytest-xdist workers included) records each release, while the others wait for its files. This does
not rely on ``--dist loadgroup`` keeping a release's tests on one worker (with pytest 9.2 and pytest-xdist 3.8 it
does not: xdist sets ``item._nodeid``, which pytest 9 no longer reads).

Every test below this folder (a trainer package's own tests included) is marked ``conformance``, so that
``-m "not conformance"`` leaves out all that needs a real TRL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..shared import once, session_folder
from .api import ReleaseApi, classes_of, release_api_of
from .driver import Run, load_runs
from .envs import EnvError, record_runs
from .trainers import package

NEEDED = pytest.StashKey[list[tuple[str, str]]]()
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
    """``get(trainer, release)``: every run of that trainer in that release by name. The trainers that the selected
    tests need from one release are recorded together, in one process (one import of TRL), by whichever process of
    the session comes first; a trainer no test announced is recorded alone when asked for."""

    def __init__(self, factory: pytest.TempPathFactory, needed: list[tuple[str, str]]):
        self.factory = factory
        self.by_release: dict[str, list[str]] = {}
        for trainer, release in needed:
            self.by_release.setdefault(release, []).append(trainer)
        self.loaded: dict[tuple[str, str], dict[str, Run]] = {}

    def _record(self, trainers: list[str], release: str, name: str) -> Path:
        """The folder holding the trainers' runs files; blocks while another thread or process records it."""

        def make(folder):
            folder.mkdir(parents=True)
            record_runs(trainers, release, folder, describe=classes_of(release))

        return once(self.factory, name, make)

    def _release(self, release: str) -> Path:
        """The folder of every announced trainer of the release, recorded together."""
        return self._record(self.by_release[release], release, f"trl-{release}")

    def _folder(self, trainer: str, release: str) -> Path:
        if trainer in self.by_release.get(release, []):
            return self._release(release)
        return self._record([trainer], release, f"{trainer}-trl-{release}")

    def release_folder(self, release: str) -> Path | None:
        """The folder of the release's recordings (waiting for them), if this session records that release."""
        if release not in self.by_release:
            return None
        try:
            return self._release(release)
        except (EnvError, OSError, pytest.fail.Exception):
            return None  # the tests reading the runs report it; the API is then read alone

    def _background(self, release: str) -> None:
        try:
            self._release(release)
        except (Exception, pytest.fail.Exception):  # recorded by `once`: the tests that read the runs report it
            pass

    def start(self) -> None:
        for release in self.by_release:
            threading.Thread(target=self._background, args=(release,), daemon=True).start()

    def get(self, trainer: str, release: str) -> dict[str, Run]:
        if (trainer, release) not in self.loaded:
            try:
                folder = self._folder(trainer, release)
            except (EnvError, OSError) as exc:
                pytest.fail(f"{trainer}, trl {release}: {exc}", pytrace=False)
            runs, error = folder / f"{trainer}.pt", folder / f"{trainer}.error"
            if not runs.exists():
                why = error.read_text() if error.exists() else "no runs file was written"
                pytest.fail(f"{trainer}, trl {release}: recording failed (log: {folder / 'runs.log'}):\n{why}",
                            pytrace=False)
            self.loaded[trainer, release] = load_runs(runs, package(trainer).RECORDS)
        return self.loaded[trainer, release]


@pytest.fixture(scope="session")
def recordings(request, tmp_path_factory) -> Recordings:
    """The session's recordings, started in the background the first time a test needs any."""
    session_folder(tmp_path_factory)  # made here, before any thread asks for it
    rec = Recordings(tmp_path_factory, request.config.stash.get(NEEDED, []))
    rec.start()
    return rec


@pytest.fixture(scope="session")
def recorded(recordings) -> Iterator[Callable[[str, str], dict[str, Run]]]:
    """``recorded(trainer, release)``: every run of that trainer in that TRL release, by name."""
    yield recordings.get


@pytest.fixture(scope="session")
def release_api(tmp_path_factory, recordings) -> ReleaseApi:
    """``release_api(release, cls)``: the config fields, defaults and trainer arguments of a trainer class in that
    release (see ``api.py``), from the release's recording process where the session records it."""
    return release_api_of(tmp_path_factory, recordings.release_folder)
