"""What a contributor waits for after editing one YAML: the rebuild of a one-line, one-language preview
(`atlas serve --version X --lang Y --watch`), against a full build of every line, measured in the same run.
Medians of N runs, warm cache, one metric file touched before each run.

    .venv/bin/python benchmarks/preview_rebuild.py [--runs 3] [--version 1.16] [--lang zh]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from timing import ROOT, median, runs, shown

from generator.pipeline import build_site


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--version", default="1.16")
    parser.add_argument("--lang", default="zh")
    args = parser.parse_args()
    touched = ROOT / "metrics/grpo/kl.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        def build(**kw) -> None:
            touched.touch()
            build_site(ROOT, site_dir=Path(tmp) / "site", **kw)

        build(versions=[args.version], langs=[args.lang])  # warm the caches and imports
        preview = runs(lambda: build(versions=[args.version], langs=[args.lang]), args.runs)
        one_line = runs(lambda: build(versions=[args.version]), args.runs)
        full = runs(build, args.runs)
    print(f"preview rebuild, line {args.version}, language {args.lang}: {shown(preview)}")
    print(f"one line, every language: {shown(one_line)}")
    print(f"every line and language: {shown(full)} (the preview is {median(full) / median(preview):.1f}x faster)")


if __name__ == "__main__":
    main()
