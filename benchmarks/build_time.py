"""`atlas build` (validate, run snippets, render KaTeX, generate Markdown, mkdocs for every version and language)
against a bare `mkdocs build` of the same generated Markdown, each in a new process as a user runs them.
`atlas build` is measured cold (empty .cache/atlas: every snippet and formula runs) and warm (the usual rebuild:
only edited snippets and formulas run). Prints medians of N runs and ratios against the bare build.

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

import yaml  # noqa: E402

from generator.build import build_site, generate_docs, mkdocs_config  # noqa: E402
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

        configs = []
        for version, docs, _ in prepared:
            cfg = tmp_path / f"bare-{version.name}.yml"
            cfg.write_text(yaml.safe_dump(mkdocs_config(atlas, version, docs, tmp_path / "bare" / version.name, langs),
                                          allow_unicode=True), encoding="utf-8")
            configs.append(cfg)

        per_version: dict[str, list[float]] = {v.name: [] for v, _, _ in prepared}

        def bare() -> None:
            for (version, _, _), cfg in zip(prepared, configs, strict=True):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg)], check=True,
                               cwd=ROOT, capture_output=True)
                per_version[version.name].append(time.perf_counter() - start)

        def full(cold: bool) -> None:
            extra = ["--no-cache"] if cold else []
            subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(ROOT), "build", *extra,
                            "--site-dir", str(tmp_path / "full")], check=True, cwd=ROOT, capture_output=True)

        full(cold=False)  # fill the cache once
        bare_times = [timed(bare) for _ in range(args.runs)]
        warm_times = [timed(lambda: full(cold=False)) for _ in range(args.runs)]
        cold_times = [timed(lambda: full(cold=True)) for _ in range(args.runs)]
        inproc_times = [timed(lambda: build_site(ROOT, site_dir=tmp_path / "inproc", atlas=atlas))
                        for _ in range(args.runs)]
    pages = sum(p for _, _, p in prepared)
    b, w, c, i = (statistics.median(t) for t in (bare_times, warm_times, cold_times, inproc_times))
    print(f"versions: {[v.name for v, _, _ in prepared]}, languages: {langs}, generated pages: {pages}")
    print(f"bare `mkdocs build` of the same Markdown (new process), median of {args.runs}: {b:.2f} s")
    print(f"`atlas build`, warm cache (new process), median of {args.runs}: {w:.2f} s "
          f"-> ratio {w / b:.3f}, generation adds {100 * (w / b - 1):.1f}%")
    print(f"`atlas build --no-cache`, every snippet and formula run (new process), median of {args.runs}: {c:.2f} s "
          f"-> ratio {c / b:.3f}, generation adds {100 * (c / b - 1):.1f}%")
    print(f"render + mkdocs from validated models (in process), median of {args.runs}: {i:.2f} s "
          f"-> ratio {i / b:.3f}")
    for (version, _, pages_of_version) in prepared:
        print(f"  per version: {version.name} ({pages_of_version} pages, 3 languages): bare mkdocs median "
              f"{statistics.median(per_version[version.name]):.2f} s")


if __name__ == "__main__":
    main()
