"""Record trainers' runs with the interpreter of the TRL release under test, offline, on CPU::

    .cache/atlas/venvs/trl-0.26.2/bin/python -m tests.conformance.record --trainer grpo --trl-version 0.26.2 \\
        --out runs.pt
    .cache/atlas/venvs/trl-0.26.2/bin/python -m tests.conformance.record --trainer grpo,dpo --trl-version 0.26.2 \\
        --out-dir runs/      # runs/grpo.pt, runs/dpo.pt (runs/<trainer>.error where a trainer failed)
    python -m tests.conformance.record --trainer grpo --trl-version 1.16.0   # no --out: print what was logged

The trainer's package (``trainers/<trainer>/``) says which runs a release gets and makes each one; this writes them
into one file per trainer (``driver.save_runs``) that the tests read in the project's own virtualenv. Several
trainers in one process import torch, transformers and TRL once: that import costs more than most runs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import traceback

from . import tiny


def main(argv: list[str] | None = None) -> int:
    tiny.offline()  # before anything imports transformers or huggingface_hub
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", required=True,
                        help="a trainer with a package in tests/conformance/trainers/, or several, comma-separated")
    parser.add_argument("--trl-version", required=True, help="the TRL release this interpreter must have")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--out", help="write the runs of the one trainer here (driver.save_runs)")
    out.add_argument("--out-dir", help="write each trainer's runs to <trainer>.pt here, or why it failed to "
                                       "<trainer>.error, and go on with the next trainer")
    parser.add_argument("--runs", help="comma-separated run names (default: every run this release gets)")
    parser.add_argument("--describe", help="with --out-dir: a JSON list of [module, trainer class, config class] to "
                                           "describe into api.json (describe.py)")
    opts = parser.parse_args(argv)

    import trl

    from .trainers import trainer_ids

    trainers = opts.trainer.split(",")
    if trl.__version__ != opts.trl_version:
        print(f"{sys.executable} has trl {trl.__version__}, not {opts.trl_version}", file=sys.stderr)
        return 2
    if unknown := sorted(set(trainers) - set(trainer_ids())):
        print(f"no trainer package {unknown} (known: {trainer_ids()})", file=sys.stderr)
        return 2
    if (opts.out or opts.runs) and len(trainers) > 1:
        print("--out and --runs take one trainer; use --out-dir for several", file=sys.stderr)
        return 2
    if not opts.out_dir:
        return _record(trainers[0], opts.trl_version, opts.runs, opts.out)
    if opts.describe:
        from .describe import describe

        classes = [tuple(c) for c in json.loads(opts.describe)]
        with open(os.path.join(opts.out_dir, "api.json"), "w") as fh:
            json.dump(describe(classes), fh)
    failed = 0
    for trainer in trainers:
        target = os.path.join(opts.out_dir, f"{trainer}.pt")
        try:
            code = _record(trainer, opts.trl_version, None, target)
        except Exception:  # the other trainers of the release still get their runs
            code, why = 1, traceback.format_exc()
        else:
            why = f"exit code {code}"
        if code:
            failed += 1
            with open(os.path.join(opts.out_dir, f"{trainer}.error"), "w") as fh:
                fh.write(why)
    return 1 if failed else 0


def _record(trainer: str, release: str, run_names: str | None, out: str | None) -> int:
    """Record the trainer's runs of this release (``run_names``, default all) into ``out``, or print them."""
    import trl

    from .driver import save_runs
    from .trainers import package

    pkg = package(trainer)
    known = pkg.runs_for(release)
    names = run_names.split(",") if run_names else known
    unknown = sorted(set(names) - set(known))
    if unknown:
        print(f"no run {unknown} of {trainer} for trl {release} (known: {known})", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    runs = {}
    with tiny.quiet(), tiny.one_thread(), tempfile.TemporaryDirectory(prefix=f"atlas-{trainer}-") as tmp:
        for name in names:
            with contextlib.redirect_stdout(io.StringIO()):
                runs[name] = pkg.run(name, os.path.join(tmp, name))
            runs[name].trainer = trainer
    if out:
        save_runs(runs, out)
    for r in runs.values():
        counts = ", ".join(f"{len(rs)} {kind}" for kind, rs in r.records.items())
        print(f"== {r.name}: {len(r.entries())} entries, {counts}, {r.seconds:.1f}s")
        if not out:
            for e in r.entries():
                print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in e.items()})
    print(f"{trainer}, trl {trl.__version__}: {len(runs)} runs in {time.perf_counter() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
