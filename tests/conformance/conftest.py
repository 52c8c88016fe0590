"""The recorded GRPOTrainer runs of each TRL release, made once per test session.

Each release's runs execute in a subprocess with that release's interpreter (``envs.py``) and land in one file in
a folder the whole session shares, so that with pytest-xdist the worker that asks first records them and any other
worker that needs them (the cross-release tests) waits for that file instead of training again.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from .envs import EnvError, file_lock, record_runs
from .records import Run, load_runs


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> Callable[[str], dict[str, Run]]:
    """``recorded(release)``: every run of that TRL release, by name."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, above the per-worker ones
    loaded: dict[str, dict[str, Run]] = {}

    def get(release: str) -> dict[str, Run]:
        if release not in loaded:
            path = shared / f"trl-{release}.pt"
            failed = shared / f"trl-{release}.failed"
            with file_lock(shared / f"trl-{release}.lock"):
                if failed.exists():  # another worker tried already: do not pay for it twice
                    pytest.fail(failed.read_text(), pytrace=False)
                if not path.exists():
                    try:
                        record_runs(release, path)
                    except (EnvError, OSError) as exc:
                        failed.write_text(f"trl {release}: {exc}")
                        pytest.fail(f"trl {release}: {exc}", pytrace=False)
            loaded[release] = load_runs(path)
        return loaded[release]

    return get
