"""`atlas build` (read, check, run snippets, render KaTeX, generate Markdown, mkdocs for every line and language,
cheat-sheets) against a bare `mkdocs build` of the same generated Markdown, each in a new process as a user runs
them. `atlas build` is measured cold (`--no-cache`: every snippet and formula runs) and warm (the usual rebuild).
Prints medians of N runs and ratios against the bare build, measured in the same run.

    .venv/bin/python benchmarks/build_time.py [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from timing import ROOT, median, runs, shown

from generator.pipeline import build_site, line_docs, load_atlas, views_of
from generator.render.i18n_pages import translation_report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    atlas = load_atlas(ROOT)
    langs = atlas.config.languages
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        by_line = views_of(atlas, None, langs)
        report = translation_report(by_line[0][0])
        # bare mkdocs on Markdown generated once, per line, exactly as the build runs it
        configs, pages = [], {}
        for views in by_line:
            name = views[0].line.name
            docs = tmp_path / "docs" / name
            config = line_docs(views, report, docs, tmp_path / "bare" / name)
            pages[name] = sum(1 for p in docs.rglob("*.md"))
            path = tmp_path / f"bare-{name}.yml"
            path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
            configs.append((name, path))
        per_line: dict[str, list[float]] = {name: [] for name, _ in configs}

        def bare() -> None:
            for name, path in configs:
                per_line[name] += runs(lambda p=path: subprocess.run(
                    [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(p)], check=True, cwd=ROOT,
                    capture_output=True), 1)

        def full(cold: bool) -> None:
            extra = ["--no-cache"] if cold else []
            subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(ROOT), "build", *extra,
                            "--site-dir", str(tmp_path / "full")], check=True, cwd=ROOT, capture_output=True)

        full(cold=False)  # fill the cache once
        bare_times = runs(bare, args.runs)
        warm = runs(lambda: full(cold=False), args.runs)
        cold = runs(lambda: full(cold=True), args.runs)
        inproc = runs(lambda: build_site(ROOT, site_dir=tmp_path / "inproc", atlas=atlas), args.runs)
    b = median(bare_times)
    print(f"lines: {[name for name, _ in configs]}, languages: {[lang.code for lang in langs]}, "
          f"generated pages: {sum(pages.values())}")
    print(f"bare `mkdocs build` of the same Markdown (new process, lines one after another): {shown(bare_times)}")
    for label, times in (("`atlas build`, warm cache (new process)", warm),
                         ("`atlas build --no-cache`, every snippet and formula run (new process)", cold),
                         ("render + mkdocs + sheets from the checked atlas (in process)", inproc)):
        print(f"{label}: {shown(times)} -> ratio {median(times) / b:.3f}, adds {100 * (median(times) / b - 1):.1f}%")
    for name, _ in configs:
        print(f"  line {name} ({pages[name]} pages): bare mkdocs median {median(per_line[name]):.2f} s")


if __name__ == "__main__":
    main()
