"""One set of real GRPOTrainer runs per test session (they take a few seconds; importing TRL dominates)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def grpo_runs():
    pytest.importorskip("trl")
    import trl

    if trl.__version__ != "1.16.0":
        pytest.skip(f"the conformance suite pins trl==1.16.0 (found {trl.__version__})")
    from .trl_runs import run_all

    return run_all()
