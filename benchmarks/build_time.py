"""Full `atlas build` (validate, run snippets, render KaTeX, generate Markdown, mkdocs for every version and
language) against a bare `mkdocs build` of the same generated Markdown. Prints medians of N runs and the ratio.

    .venv/bin/python benchmarks/build_time.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.build import build_site, generate_docs, mkdocs_config, run_mkdocs  # noqa: E402
from generator.collect import collect  # noqa: E402


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    atlas = collect(ROOT)
    langs = atlas.config.lang_codes
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        # bare mkdocs on Markdown generated once, per version, exactly as the build runs it
        prepared = []
        for version in atlas.config.versions:
            docs = tmp_path / "docs" / version.name
            pages = generate_docs(atlas, version, docs, langs)
            prepared.append((version, docs, pages))

        def bare() -> None:
            for version, docs, _ in prepared:
                out = tmp_path / "bare" / version.name
                run_mkdocs(mkdocs_config(atlas, version, docs, out, langs), tmp_path / f"bare-{version.name}.yml")

        def full() -> None:
            # a fresh process each time, as a user runs it (no warm imports or caches of this process)
            subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(ROOT), "build",
                            "--site-dir", str(tmp_path / "full")], check=True, cwd=ROOT, capture_output=True)

        full_times = [timed(full) for _ in range(args.runs)]
        bare_times = [timed(bare) for _ in range(args.runs)]
        inproc_times = [timed(lambda: build_site(ROOT, site_dir=tmp_path / "inproc", atlas=atlas))
                        for _ in range(args.runs)]
    pages = sum(p for _, _, p in prepared)
    f, b, i = statistics.median(full_times), statistics.median(bare_times), statistics.median(inproc_times)
    print(f"versions: {[v.name for v, _, _ in prepared]}, languages: {langs}, generated pages: {pages}")
    print(f"full `atlas build` (new process, validation + snippets + KaTeX + mkdocs), median of {args.runs}: {f:.2f} s")
    print(f"bare `mkdocs build` of the same Markdown, median of {args.runs}: {b:.2f} s")
    print(f"render + mkdocs from validated models (in process), median of {args.runs}: {i:.2f} s")
    print(f"ratio full / bare: {f / b:.3f} (generation adds {100 * (f / b - 1):.1f}%)")
    print(f"ratio render+mkdocs / bare: {i / b:.3f} (rendering adds {100 * (i / b - 1):.1f}%)")


if __name__ == "__main__":
    main()
