"""The recorded GRPOTrainer runs of each TRL release, made once per test session.

Each release's runs execute in a subprocess with that release's interpreter (``envs.py``) and land in one file in
a folder the whole session shares. As soon as a test asks for runs, the recordings of every release the selected
tests name (``@pytest.mark.trl(release, ...)``) start side by side in the background; a file lock per release makes
sure exactly one process of the session (pytest-xdist workers included) records it, while the others wait for its
file. This does not rely on ``--dist loadgroup`` keeping a release's tests on one worker (with pytest 9.2 and
pytest-xdist 3.8 it does not: xdist sets ``item._nodeid``, which pytest 9 no longer reads).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .envs import EnvError, file_lock, record_runs
from .records import Run, load_runs

NEEDED = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "trl(*releases): the TRL releases whose recorded runs the test reads")


def pytest_collection_finish(session: pytest.Session) -> None:
    needed: list[str] = []
    for item in session.items:
        for mark in item.iter_markers("trl"):
            needed += [r for r in mark.args if r not in needed]
    session.config.stash[NEEDED] = needed


class Recordings:
    """``get(release)``: every run of that release by name, recorded by whichever process of the session locks first."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.loaded: dict[str, dict[str, Run]] = {}
        self.started: set[str] = set()

    def _ensure(self, release: str) -> None:
        """Record the release unless done (or failed) already; blocks while another thread or process records it."""
        path, failed = self.folder / f"trl-{release}.pt", self.folder / f"trl-{release}.failed"
        with file_lock(self.folder / f"trl-{release}.lock"):
            if path.exists() or failed.exists():
                return
            try:
                record_runs(release, path)
            except (EnvError, OSError) as exc:
                failed.write_text(f"trl {release}: {exc}")

    def start(self, releases: list[str]) -> None:
        for release in releases:
            if release not in self.started:
                self.started.add(release)
                threading.Thread(target=self._ensure, args=(release,), daemon=True).start()

    def get(self, release: str) -> dict[str, Run]:
        if release not in self.loaded:
            self._ensure(release)
            failed = self.folder / f"trl-{release}.failed"
            if failed.exists():
                pytest.fail(failed.read_text(), pytrace=False)
            self.loaded[release] = load_runs(self.folder / f"trl-{release}.pt")
        return self.loaded[release]


@pytest.fixture(scope="session")
def recorded(request, tmp_path_factory) -> Iterator[Callable[[str], dict[str, Run]]]:
    """``recorded(release)``: every run of that TRL release, by name."""
    folder = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = folder.parent  # the session's folder, above the per-worker ones
    recordings = Recordings(folder)
    recordings.start(request.config.stash.get(NEEDED, []))
    yield recordings.get
