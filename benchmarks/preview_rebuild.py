"""What a contributor waits for after editing one YAML: the rebuild of a one-version, one-language preview
(`atlas serve --version X --lang Y --watch`), against a full multi-version build. Medians of N runs, warm cache,
one metric file touched before each run.

    .venv/bin/python benchmarks/preview_rebuild.py [--runs 3] [--version 1.16] [--lang zh]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.build import build_site  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--version", default="1.16")
    parser.add_argument("--lang", default="zh")
    args = parser.parse_args()
    touched = ROOT / "metrics/grpo/kl.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        def run(**kw) -> float:
            touched.touch()
            start = time.perf_counter()
            build_site(ROOT, site_dir=Path(tmp) / "site", **kw)
            return time.perf_counter() - start

        run(versions=[args.version], langs=[args.lang])  # warm the caches and imports
        preview = [run(versions=[args.version], langs=[args.lang]) for _ in range(args.runs)]
        one_version = [run(versions=[args.version]) for _ in range(args.runs)]
        full = [run() for _ in range(args.runs)]
    p, o, f = (statistics.median(x) for x in (preview, one_version, full))
    print(f"preview rebuild, version {args.version}, language {args.lang}, median of {args.runs}: {p:.2f} s")
    print(f"one version, all languages, median of {args.runs}: {o:.2f} s")
    print(f"every version and language, median of {args.runs}: {f:.2f} s (preview is {f / p:.1f}x faster)")


if __name__ == "__main__":
    main()
