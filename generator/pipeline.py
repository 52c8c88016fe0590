"""The whole pipeline: read -> check -> render every (line, language) -> mkdocs -> cheat-sheets -> atomic swap into
site/. `atlas build`, `atlas pdf` and `atlas serve` call it; so do the tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from .build import page_cache
from .build.docs import write_docs
from .build.mkdocs_config import mkdocs_config
from .build.mkdocs_run import run_mkdocs
from .build.publish import publish, remove_stale_work, write_root
from .build.search_index import index_line
from .cache import Cache, cache_dir
from .check import Atlas, check
from .doctor.site import doctor_example
from .errors import BuildError
from .print.pdf import make_pdf, pdf_tasks, render_sheets, sheet_documents, write_files
from .read.config import Language
from .read.sources import Sources, read_sources
from .read.translations import Report
from .render.api import metrics_api
from .render.i18n_pages import translation_report
from .render.mathref import write_table
from .render.pages import pages
from .render.view import View
from .resolve.releases import select_lines
from .workers import run_parallel

TEMPLATES = "templates"  # the folder under .cache/atlas/ of the theme's compiled templates (Jinja's bytecode)


def load_atlas(root: Path, run_snippets: bool = True, use_cache: bool = True, sources: Sources | None = None) -> Atlas:
    """Read (unless ``sources`` were read already) and check every source of ``root`` (`SourceErrors` with all
    problems); the KaTeX HTML and snippet results of unchanged sources come from the cache in ``.cache/atlas/``
    unless ``use_cache`` is off."""
    root = root.resolve()
    cache = Cache(cache_dir(root) / "results.json" if use_cache else None)
    return check(sources or read_sources(root, use_cache), run_snippets=run_snippets, cache=cache)


def published_at(atlas: Atlas, site_url: str) -> Atlas:
    """The atlas as published at ``site_url`` (the public URL of the site's root, ending in '/'): the pages'
    canonical links, the cheat-sheets' links and QR codes point there instead of atlas.yml's `site_url`."""
    if not re.match(r"^https?://[^\s]+/$", site_url):
        raise BuildError(f"--site-url {site_url}: give the site's public root URL, ending in '/' "
                         "(e.g. https://example.org/rl-metrics-atlas/)")
    sources = replace(atlas.sources, config=atlas.config.model_copy(update={"site_url": site_url}))
    return replace(atlas, sources=sources, memo={})


def views_of(atlas: Atlas, lines: list[str] | None, langs: list[Language]) -> list[list[View]]:
    """One view per (line, language), grouped by line: the default language first."""
    chosen = {line.name for line in select_lines(atlas.config, lines)}
    ordered = sorted(langs, key=lambda lang: not lang.default)
    return [[View(atlas, e, lang) for lang in ordered] for e in atlas.editions if e.line.name in chosen]


def line_docs(views: list[View], report: Report, docs: Path, out: Path, cache: Path | None = None
              ) -> dict[str, Any]:
    """Write the Markdown of one line in the views' languages into ``docs`` (and the formulas' HTML beside it);
    return the mkdocs configuration that builds it into ``out``, keeping its pages' conversions and its theme's
    compiled templates in the build cache folder ``cache`` (`build.page_cache`, `build.hooks`; None: none kept)."""
    atlas, edition = views[0].atlas, views[0].edition
    write_docs({rel: text for v in views for rel, text in pages(v, report, doctor_example(atlas, v.lang.code)).items()},
               docs)
    math = docs.parent / f"{docs.name}.math.json"
    write_table(atlas.math, math)
    default = views[0] if views[0].lang.default else View(atlas, edition, atlas.config.default)
    config = mkdocs_config(default, docs, out, [v.lang.code for v in views], math)
    if cache is not None:  # read by the hooks
        config.setdefault("extra", {}).update(atlas_pages=str(cache / page_cache.PAGES),
                                               atlas_templates=str(cache / TEMPLATES))
    return config


# What the forked workers of a build inherit (see `workers`): the build in progress.
_BUILD: dict[str, Any] = {}


def _build_line(index: int) -> None:
    """In a worker: the Markdown of one line, mkdocs, its search index and its JSON index, into the build's work
    folder."""
    views, report, work = _BUILD["lines"][index], _BUILD["report"], _BUILD["work"]
    name = views[0].line.name
    out = work / "site" / name
    run_mkdocs(line_docs(views, report, work / "docs" / name, out, _BUILD["cache"]), work / f"mkdocs-{name}.yml")
    index_line(out)
    (out / "api").mkdir(parents=True, exist_ok=True)
    (out / "api" / "metrics.json").write_text(
        json.dumps(metrics_api(views[0].atlas, views[0].edition), ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")


def build_site(root: Path, site_dir: Path | None = None, versions: list[str] | None = None,
               langs: list[str] | None = None, atlas: Atlas | None = None, use_cache: bool = True) -> Path:
    """Check everything, build every requested line and language, then publish atomically into ``site_dir``.
    The lines (mkdocs) and the cheat-sheet PDFs that are not cached yet are made on every core."""
    atlas = atlas or load_atlas(root, use_cache=use_cache)
    cfg = atlas.config
    chosen = cfg.select_languages(langs)
    by_line = views_of(atlas, versions, chosen)
    site = (site_dir or atlas.root / "site").resolve()
    work_root = atlas.root / "build"
    work_root.mkdir(exist_ok=True)
    remove_stale_work(work_root)
    sheets = cache_dir(atlas.root) / "sheets" if use_cache else None
    cache = cache_dir(atlas.root) if use_cache else None
    if cache is not None:
        page_cache.prune(cache / page_cache.PAGES)
    files, jobs = sheet_documents([v for views in by_line for v in views])
    done, pdfs = pdf_tasks(jobs, sheets)
    files |= done
    work = Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=work_root))  # owner's pid: remove_stale_work
    _BUILD.update(lines=by_line, report=translation_report(by_line[0][0]), work=work, cache=cache)
    try:
        # the lines take longest: first, so that the PDFs fill the other cores
        tasks = [(_build_line, (i,)) for i in range(len(by_line))]
        tasks += [(make_pdf, (job, sheets, svgs)) for job, svgs in pdfs]
        made = run_parallel(tasks)[len(by_line):]
        files.update({job.path: pdf for (job, _), pdf in zip(pdfs, made, strict=True)})
        out = work / "site"
        write_files(files, out)  # the cheat-sheets, inside the work folder before the swap
        write_root(out, [views[0].line for views in by_line], cfg.latest, cfg.default_lang)
        site.parent.mkdir(parents=True, exist_ok=True)
        publish(out, site)
    finally:
        _BUILD.clear()
        shutil.rmtree(work, ignore_errors=True)
    return site


def build_pdfs(atlas: Atlas, out: Path, versions: list[str] | None = None,
               langs: list[str] | None = None, use_cache: bool = True) -> list[Path]:
    """`atlas pdf`: the sheets of the chosen lines (all by default) into ``out``/<line>/; nothing else is touched,
    and nothing is written if a sheet fails."""
    views = views_of(atlas, versions, atlas.config.select_languages(langs))
    cache = cache_dir(atlas.root) / "sheets" if use_cache else None
    return write_files(render_sheets([v for line in views for v in line], cache), out)
