"""The code follows the project's lint rules (ruff, configured in pyproject.toml): `make test` keeps them, so a
finding fails here instead of piling up for `make lint`."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise",
                           "generator", "tests", "benchmarks", "examples"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
