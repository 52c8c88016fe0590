"""Record a trainer's runs with the interpreter of the TRL release under test, offline, on CPU::

    .cache/atlas/venvs/trl-0.26.2/bin/python -m tests.conformance.record --trainer grpo --trl-version 0.26.2 \\
        --out runs.pt
    python -m tests.conformance.record --trainer grpo --trl-version 1.16.0   # no --out: print what was logged

The trainer's package (``trainers/<trainer>/``) says which runs a release gets and makes each one; this writes them
into one file (``driver.save_runs``) that the tests read in the project's own virtualenv.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time

from . import tiny


def main(argv: list[str] | None = None) -> int:
    tiny.offline()  # before anything imports transformers or huggingface_hub
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", required=True, help="a trainer with a package in tests/conformance/trainers/")
    parser.add_argument("--trl-version", required=True, help="the TRL release this interpreter must have")
    parser.add_argument("--out", help="write the runs here (driver.save_runs); without it, print the log")
    parser.add_argument("--runs", help="comma-separated run names (default: every run this release gets)")
    opts = parser.parse_args(argv)

    import trl

    from .driver import save_runs
    from .trainers import package, trainer_ids

    if trl.__version__ != opts.trl_version:
        print(f"{sys.executable} has trl {trl.__version__}, not {opts.trl_version}", file=sys.stderr)
        return 2
    if opts.trainer not in trainer_ids():
        print(f"no trainer package '{opts.trainer}' (known: {trainer_ids()})", file=sys.stderr)
        return 2
    pkg = package(opts.trainer)
    known = pkg.runs_for(opts.trl_version)
    names = opts.runs.split(",") if opts.runs else known
    unknown = sorted(set(names) - set(known))
    if unknown:
        print(f"no run {unknown} of {opts.trainer} for trl {opts.trl_version} (known: {known})", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    runs = {}
    with tiny.quiet(), tiny.one_thread(), tempfile.TemporaryDirectory(prefix=f"atlas-{opts.trainer}-") as tmp:
        for name in names:
            with contextlib.redirect_stdout(io.StringIO()):
                runs[name] = pkg.run(name, os.path.join(tmp, name))
            runs[name].trainer = opts.trainer
    if opts.out:
        save_runs(runs, opts.out)
    for r in runs.values():
        counts = ", ".join(f"{len(rs)} {kind}" for kind, rs in r.records.items())
        print(f"== {r.name}: {len(r.entries())} entries, {counts}, {r.seconds:.1f}s")
        if not opts.out:
            for e in r.entries():
                print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in e.items()})
    print(f"{opts.trainer}, trl {trl.__version__}: {len(runs)} runs in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
