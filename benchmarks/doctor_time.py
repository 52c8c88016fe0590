"""`atlas doctor` on a long run: a 10,000-step history of 40 keys of the latest line's first trainer (healthy noise,
one planted problem), as a user runs it (a new process, the rule book cached), in process, and the cost of one
log for `AtlasDoctorCallback`.

    .venv/bin/python benchmarks/doctor_time.py [--runs 3] [--steps 10000] [--keys 40]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from timing import Figure, median, options, report, runs, shown

from generator.doctor.evaluate import diagnose
from generator.doctor.readers import read_history
from generator.doctor.rulebook import load_book


def history(book: dict, steps: int, keys: int) -> tuple[list[dict], dict]:
    """Log entries of ``keys`` keys of the latest line's first trainer: each around a level with 3% noise, one
    of them NaN once."""
    trainer = book["lines"][0]["trainers"][0]
    names = [m["logged_as"] for m in trainer["metrics"] if "{" not in m["logged_as"]]
    names += [f"rewards/f{i}/mean" for i in range(keys - len(names[:keys]))]
    names = names[:keys]
    rng = np.random.default_rng(0)
    curves = {k: 0.3 * (1 + rng.normal(0, 0.03, steps)) for k in names}
    curves[names[0]][steps // 2] = np.nan
    entries = [{**{k: (None if np.isnan(v[s]) else float(v[s])) for k, v in curves.items()}, "step": s + 1}
               for s in range(steps)]
    return entries, trainer


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--keys", type=int, default=40)
    args = parser.parse_args()
    root = Path(args.root)
    book = load_book(root)  # compiled and cached once, as after a user's first run
    entries, trainer = history(book, args.steps, args.keys)
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trainer_state.json"
        path.write_text(json.dumps({"log_history": entries}), encoding="utf-8")
        walls = []
        for _ in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(root), "doctor", str(path),
                                   "--json"], cwd=root, capture_output=True, text=True)
            walls.append(time.perf_counter() - start)
            assert done.returncode in (0, 1), done.stderr
        found = json.loads(done.stdout)
        figures.append(Figure("6. doctor", f"`atlas doctor` on a {args.steps:,}-step history of {args.keys} keys "
                                           f"(new process, trainer_state.json, {found['red_flags']} red flag(s) found)",
                              shown(walls), "< 2 s", median(walls) < 2.0))
        inside = runs(lambda: diagnose(book, read_history(path)), args.runs)
        figures.append(Figure("6. doctor", "of which reading the file and evaluating every rule (in process)",
                              shown(inside)))
    from rl_metrics_atlas import AtlasDoctorCallback

    cb = AtlasDoctorCallback(trl=book["lines"][0]["trl"], trainer=trainer["id"], root=root)
    cb.on_train_begin(SimpleNamespace(to_dict=dict), None, None)
    logs = [{k: v for k, v in e.items() if k != "step"} for e in entries[:2000]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        for step, log in enumerate(logs, start=1):
            cb.on_log(None, SimpleNamespace(global_step=step), None, logs=log)
        per_log = (time.perf_counter() - start) / len(logs)
    figures.append(Figure("6. doctor", f"`AtlasDoctorCallback`, one log of {args.keys} keys (mean of {len(logs):,})",
                          f"{per_log * 1000:.1f} ms", "< 50 ms", per_log < 0.05))
    report(figures, args.json)


if __name__ == "__main__":
    main()
