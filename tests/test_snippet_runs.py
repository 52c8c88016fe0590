"""The warm snippet runner (`generator/check/snippet_runs.py`): every batch of a process runs in a fresh child forked
by one runner that imported torch once, and a child that ends, hangs or crashes is reported without ending the
runner, whose next batch still runs."""

from __future__ import annotations

import os

from generator.check import snippet_runs


def _job(body: str, expected: float = 1.0, timeout: float = 5.0) -> dict:
    return {"code": f"import os\nimport torch\n\n\ndef f():\n    {body}\n", "function": "f", "timeout": timeout,
            "filename": "t.yaml#snippet", "example": {"inputs": {}, "expected": expected, "explanation": {"en": "x"}}}


def test_batches_are_forked_from_one_runner_that_outlives_a_dead_child():
    first = snippet_runs.run_jobs([_job("return float(os.getpid())", expected=0.0, timeout=5.0)], 5.0)
    runner = snippet_runs._RUNNER.proc.pid
    child = int(first[0]["error"].split("returned ")[1].split(".")[0])
    assert child not in (runner, os.getpid())  # a fresh child, not the runner itself

    ended = snippet_runs.run_jobs([_job("os._exit(3)"), _job("return torch.tensor(1.0)")], 5.0)
    assert ended[0]["error"].startswith("ended the snippet runner (exit code 3)") and ended[0]["volatile"]
    assert ended[1] == {"value": 1.0}  # the job after it, in the next child

    hung = snippet_runs.run_jobs([_job("while True:\n        pass", timeout=0.5)], 0.5)
    assert hung[0]["error"] == "did not return within 0.5 s" and hung[0]["volatile"]

    again = snippet_runs.run_jobs([_job("return float(os.getpid())", expected=0.0)], 5.0)
    assert snippet_runs._RUNNER.proc.pid == runner  # the same runner all along: torch was imported once
    assert int(again[0]["error"].split("returned ")[1].split(".")[0]) != child
