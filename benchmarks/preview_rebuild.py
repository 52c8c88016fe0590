"""Target 2, edit -> preview: a cold one-line, one-language preview as `atlas serve --version X --lang Y` builds it
(a new process, caches warm), and the rebuild that `--watch` runs after one metric file is saved, against a full
build of every line measured in the same run. Medians of N runs.

    .venv/bin/python benchmarks/preview_rebuild.py [--runs 3] [--version 1.16] [--lang zh] [--json out.json]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from timing import Figure, command, median, options, python, report, runs

from generator.pipeline import build_site


def main() -> None:
    parser = options(__doc__)
    parser.add_argument("--version", default="1.16")
    parser.add_argument("--lang", default="zh")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    touched = root / "metrics/grpo/kl.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        def cold() -> None:
            command([python(), "-m", "generator.cli", "--root", str(root), "build", "--version", args.version,
                     "--lang", args.lang, "--site-dir", f"{tmp}/cold"], root)

        def rebuild(**kw) -> None:  # what `atlas serve --watch` does after a save
            touched.touch()
            build_site(root, site_dir=Path(tmp) / "site", **kw)

        cold()  # warm the caches
        cold_times = runs(cold, args.runs)
        rebuild(versions=[args.version], langs=[args.lang])
        preview = runs(lambda: rebuild(versions=[args.version], langs=[args.lang]), args.runs)
        full = runs(rebuild, args.runs)
    report([
        Figure("2. edit -> preview", f"cold preview of line {args.version}, language {args.lang} (new process)",
               f"{median(cold_times):.1f} s", "< 10 s", median(cold_times) < 10),
        Figure("2. edit -> preview", "rebuild after saving one metric file (`--watch`)",
               f"{median(preview):.1f} s ({median(full) / median(preview):.1f}x faster than a full build of "
               f"{median(full):.1f} s)", "< 1 s", median(preview) < 1),
    ], args.json)


if __name__ == "__main__":
    main()
