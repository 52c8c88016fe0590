"""Helpers for tests that share work across pytest-xdist workers: a lock per machine and the session's folder.
Importable without pytest: `make test` makes the TRL virtualenvs with the base interpreter (``conformance/envs.py``)
while it installs the project's own."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock shared by every process on this machine (pytest-xdist workers, parallel sessions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def session_folder(factory: pytest.TempPathFactory) -> Path:
    """The test session's temporary folder, the same for every pytest-xdist worker (above the per-worker ones)."""
    folder = factory.getbasetemp()
    return folder.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder


def once(factory: pytest.TempPathFactory, name: str, make) -> Path:
    """``make(folder)`` run by exactly one process of the session into ``<session>/<name>``; every other worker
    waits for it and gets the same folder. A failure is recorded and re-raised in every worker."""
    import pytest

    root = session_folder(factory)
    folder, failed = root / name, root / f"{name}.failed"
    with file_lock(root / f"{name}.lock"):
        if not folder.exists() and not failed.exists():
            try:
                make(folder)
            except BaseException as exc:
                failed.write_text(f"{type(exc).__name__}: {exc}")
                raise
    if failed.exists():
        pytest.fail(f"{name}: {failed.read_text()}", pytrace=False)
    return folder
