"""Target 3, pages: the HTML size of the metric pages, mkdocs' time per page, and what a reader's browser
transfers to show one metric page cold (HTML, styles, scripts, fonts; search files counted apart), in headless
Chromium over `atlas serve`'s server, which compresses text as a static host does.

    .venv/bin/python benchmarks/page_weight.py [--runs 3] [--json out.json]
"""

from __future__ import annotations

import statistics
import tempfile
import threading
from pathlib import Path

import yaml
from timing import CHROMIUM, CHROMIUM_ARGS, Figure, command, median, options, python, report

from generator.pipeline import build_site, line_docs, load_atlas, views_of
from generator.render import paths
from generator.render.i18n_pages import translation_report
from generator.serve import make_server

PAGE = "1.16/grpo/kl/"


def transferred(site: Path, path: str) -> tuple[int, int, int]:
    """(bytes of the page and its assets, bytes of search files, number of requests) a cold load transfers."""
    from playwright.sync_api import sync_playwright

    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sizes: dict[str, int] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.on("requestfinished", lambda req: sizes.__setitem__(req.url, req.sizes()["responseBodySize"]
                                                                       + req.sizes()["responseHeadersSize"]))
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/{path}", wait_until="networkidle")
            browser.close()
    finally:
        server.shutdown()
    search = sum(v for k, v in sizes.items() if "/pagefind/" in k)
    return sum(sizes.values()) - search, search, len(sizes)


def size(line: Path, doc: str) -> int:
    """Bytes of the built English page of ``doc`` in the line folder ``line``."""
    return (line / paths.folder(doc) / "index.html").stat().st_size


def main() -> None:
    args = options(__doc__).parse_args()
    root = Path(args.root).resolve()
    atlas = load_atlas(root)
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(root, site_dir=Path(tmp) / "site", atlas=atlas)
        line = site / "1.16"
        metric = [(size(line, paths.metric_doc(r.metric)), paths.metric_doc(r.metric))
                  for t in atlas.edition("1.16").trainers for r in t.metrics]
        history = [(size(line, paths.history_doc(r.metric)), paths.history_doc(r.metric))
                   for t in atlas.edition("1.16").trainers for r in t.metrics
                   if (line / paths.folder(paths.history_doc(r.metric)) / "index.html").is_file()]
        views = views_of(atlas, ["1.16"], atlas.config.languages)[0]
        docs = Path(tmp) / "docs"
        config = line_docs(views, translation_report(views[0]), docs, Path(tmp) / "bare")
        pages = sum(1 for _ in docs.rglob("*.md"))
        cfg = Path(tmp) / "bare.yml"
        cfg.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        per_page = median([command([python(), "-m", "mkdocs", "build", "-q", "-f", str(cfg)], root)[0]
                           for _ in range(args.runs)]) / pages
        loads = [transferred(site, PAGE) for _ in range(args.runs)]
    page_bytes = median([x[0] for x in loads])
    middle = statistics.median(s for s, _ in metric)
    report([
        Figure("3. pages", f"metric page HTML in English (the {len(metric)} metrics of 1.16), median / largest; "
               "how many over 60 KB", f"{middle / 1000:.0f} KB / {max(metric)[0] / 1000:.0f} KB ({max(metric)[1]}); "
               f"{sum(s > 60_000 for s, _ in metric)}", "each < 60 KB", max(metric)[0] < 60_000),
        Figure("3. pages", f"the {len(history)} history pages (older ranges in full), median / largest",
               f"{statistics.median(s for s, _ in history) / 1000:.0f} KB / {max(history)[0] / 1000:.0f} KB "
               f"({max(history)[1]})"),
        Figure("3. pages", f"mkdocs time per page (line 1.16, {pages} pages in 3 languages)",
               f"{1000 * per_page:.0f} ms"),
        Figure("3. pages", f"cold load of /{PAGE} with every asset ({loads[0][2]} requests, compressed)",
               f"{page_bytes / 1000:.0f} KB", "< 400 KB", page_bytes < 400_000),
        Figure("3. pages", "search files that page loads before its reader searches (compressed)",
               f"{median([x[1] for x in loads]) / 1000:.0f} KB"),
    ], args.json)


if __name__ == "__main__":
    main()
