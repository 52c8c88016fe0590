"""Target 1, the full build: `atlas build` of every line and language (read, check, render, mkdocs, cheat-sheets, on
every core) against bare `mkdocs build` runs of the same generated pages done one after another, each in a new
process as a user runs them. Warm: the usual rebuild (snippet results, KaTeX HTML, PDFs and the pages' Markdown
conversions cached by content); warm but for the pages: the same with `.cache/atlas/pages/` set aside (what the
first build after a change of mkdocs' settings or versions costs); cold: `--no-cache`. Medians of N runs; ratios
measured in the same run.

    .venv/bin/python benchmarks/build_time.py [--runs 3] [--json out.json]
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import yaml
from timing import Figure, command, median, options, python, report

from generator.build.page_cache import PAGES
from generator.cache import cache_dir
from generator.pipeline import line_docs, load_atlas, views_of
from generator.render.i18n_pages import translation_report


def main() -> None:
    args = options(__doc__).parse_args()
    root = Path(args.root).resolve()
    atlas = load_atlas(root)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        by_line = views_of(atlas, None, atlas.config.languages)
        report_ = translation_report(by_line[0][0])
        configs, pages = [], 0
        for views in by_line:
            name = views[0].line.name
            docs = tmp_path / "docs" / name
            config = line_docs(views, report_, docs, tmp_path / "bare" / name)
            pages += sum(1 for _ in docs.rglob("*.md"))
            path = tmp_path / f"bare-{name}.yml"
            path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
            configs.append(path)

        def bare() -> tuple[float, float]:
            walls, cpus = zip(*(command([python(), "-m", "mkdocs", "build", "-q", "-f", str(p)], root)
                                for p in configs), strict=True)
            return sum(walls), sum(cpus)

        def atlas_build(*extra: str) -> tuple[float, float]:
            return command([python(), "-m", "generator.cli", "--root", str(root), "build", *extra,
                            "--site-dir", str(tmp_path / "full")], root)

        def without_pages() -> tuple[float, float]:
            kept, aside = cache_dir(root) / PAGES, tmp_path / "pages-aside"
            if kept.exists():
                shutil.move(kept, aside)
            try:
                return atlas_build()
            finally:
                shutil.rmtree(kept, ignore_errors=True)
                if aside.exists():
                    shutil.move(aside, kept)

        atlas_build()  # fill the caches once
        b = [bare() for _ in range(args.runs)]
        w = [atlas_build() for _ in range(args.runs)]
        p = [without_pages() for _ in range(args.runs)]
        c = [atlas_build("--no-cache") for _ in range(args.runs)]
    bare_wall, bare_cpu = median([x[0] for x in b]), median([x[1] for x in b])
    warm_wall, warm_cpu = median([x[0] for x in w]), median([x[1] for x in w])
    cold_wall = median([x[0] for x in c])
    pages_wall, pages_cpu = median([x[0] for x in p]), median([x[1] for x in p])
    lines = len(configs)
    report([
        Figure("1. full build", f"bare `mkdocs build` of the {pages} generated pages, {lines} lines one after "
               "another (wall, CPU)", f"{bare_wall:.1f} s, {bare_cpu:.1f} s CPU"),
        Figure("1. full build", "`atlas build`, warm (wall, ratio to bare)", f"{warm_wall:.1f} s, "
               f"{warm_wall / bare_wall:.2f}", "<= 0.60", warm_wall / bare_wall <= 0.60),
        Figure("1. full build", "generation's CPU on top of mkdocs' (warm)",
               f"{100 * (warm_cpu - bare_cpu) / bare_cpu:+.1f}% ({warm_cpu:.1f} s vs {bare_cpu:.1f} s)", "< 15%",
               (warm_cpu - bare_cpu) / bare_cpu < 0.15),
        Figure("1. full build", "`atlas build`, warm but every page converted again (wall, ratio; generation's CPU)",
               f"{pages_wall:.1f} s, {pages_wall / bare_wall:.2f}; "
               f"{100 * (pages_cpu - bare_cpu) / bare_cpu:+.1f}% ({pages_cpu:.1f} s)"),
        Figure("1. full build", "`atlas build --no-cache`, every snippet, formula and PDF made (wall)",
               f"{cold_wall:.1f} s, ratio {cold_wall / bare_wall:.2f}"),
    ], args.json)


if __name__ == "__main__":
    main()
