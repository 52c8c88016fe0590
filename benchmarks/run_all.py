"""`make bench`: every benchmark, one after another, and their figures as the table in benchmarks/README.md
(between its `<!-- bench -->` markers), with the machine they were measured on.

    .venv/bin/python benchmarks/run_all.py [--runs 3] [--skip-tests]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import ROOT

BENCHMARKS = ["build_time", "preview_rebuild", "page_weight", "search_time", "doctor_time", "test_time"]
README = Path(__file__).with_name("README.md")
START, END = "<!-- bench -->", "<!-- /bench -->"


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[0]
    return (f"{cores} cores ({cpu}), {memory:.0f} GiB, Python {platform.python_version()}, load average "
            f"{load:.1f} at the start, {time.strftime('%Y-%m-%d')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-tests", action="store_true", help="leave out the test-suite timing (~10 min)")
    args = parser.parse_args()
    header = machine()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in BENCHMARKS:
            if name == "test_time" and args.skip_tests:
                continue
            out = Path(tmp) / f"{name}.json"
            extra = [] if name == "test_time" else ["--runs", str(args.runs)]
            print(f"== {name}", flush=True)
            subprocess.run([sys.executable, str(Path(__file__).with_name(f"{name}.py")), *extra, "--json", str(out)],
                           check=True, cwd=ROOT)
            rows += json.loads(out.read_text(encoding="utf-8"))
    table = ["| target | figure | measured | goal | |", "|---|---|---|---|---|"]
    for r in rows:
        met = "" if r["met"] is None else ("met" if r["met"] else "**not met**")
        table.append(f"| {r['target']} | {r['what']} | {r['value']} | {r['goal']} | {met} |".replace("\n", " "))
    text = README.read_text(encoding="utf-8")
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    how = f"medians of {args.runs} runs" if args.runs > 1 else "one run each"
    README.write_text(f"{before}{START}\nMeasured on {header}; {how}.\n\n" + "\n".join(table) + f"\n{END}{after}",
                      encoding="utf-8")
    print("\n".join(table))


if __name__ == "__main__":
    main()
