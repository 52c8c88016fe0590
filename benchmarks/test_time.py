"""Target 5, tests: the wall time of the default test run (`make test`'s pytest, two workers) and its ten slowest
tests; the set-up of the older TRL releases' virtualenvs (`make conformance-envs`, a no-op once they exist) is timed
before it and reported apart.

    .venv/bin/python benchmarks/test_time.py [--json out.json]
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

from timing import Figure, options, python, report


def main() -> None:
    args = options(__doc__).parse_args()
    root = Path(args.root).resolve()
    began = time.perf_counter()
    subprocess.run([python(), "-m", "tests.conformance.envs"], cwd=root, check=True, capture_output=True)
    envs = time.perf_counter() - began
    began = time.perf_counter()
    proc = subprocess.run([python(), "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "--durations=10",
                           "-p", "no:cacheprovider"], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - began
    # `-q` prints the summary bare; without it, pytest frames it with `=`
    summary = (re.findall(r"^(?:=+ )?(\d+ (?:passed|failed).*?)(?: =+)?$", proc.stdout, re.M) or ["?"])[-1]
    slowest = re.findall(r"^(\d+\.\d+)s (call|setup|teardown)\s+(\S+)$", proc.stdout, re.M)
    figures = [Figure("5. tests", "set-up: the older TRL releases' virtualenvs (`make conformance-envs`), wall",
                      f"{envs:.0f} s")]
    figures += [Figure("5. tests", "`pytest -n 2` (what `make test` runs), wall", f"{wall / 60:.1f} min ({summary})",
                      "< 10 min", wall < 600 and proc.returncode == 0)]
    figures += [Figure("5. tests", f"slow: {name} ({phase})", f"{float(secs):.1f} s") for secs, phase, name in slowest]
    report(figures, args.json)


if __name__ == "__main__":
    main()
