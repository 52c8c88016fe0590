"""Target 4, search: what a reader's first search downloads (only their language's index, compressed as a static
host sends it), and the time from typing an exact key to its page first in the results, in headless Chromium, with
the page freshly opened each time; Chinese words and Vietnamese with and without diacritics are checked too.

    .venv/bin/python benchmarks/search_time.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import gzip
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from timing import Figure, median, options, report

from generator.pipeline import build_site
from generator.serve import make_server

QUERIES = [("/1.16/", "clip_ratio/low_mean", "/1.16/grpo/clip_ratio/low_mean/"),
           ("/1.16/zh/", "裁剪", "/1.16/zh/"),
           ("/1.16/vi/", "ngưỡng cắt dưới", "/1.16/vi/grpo/clip_ratio/"),
           ("/1.16/vi/", "nguong cat duoi", "/1.16/vi/grpo/clip_ratio/")]


def first_results(site: Path, runs: int) -> dict[tuple[str, str], tuple[list[float], bool]]:
    from playwright.sync_api import sync_playwright

    server = make_server(site, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    out: dict[tuple[str, str], tuple[list[float], bool]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
            for start, query, expect in QUERIES:
                times, found = [], True
                for _ in range(runs):
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(base + start)
                    page.locator("input.md-search__input").click()
                    began = time.perf_counter()
                    page.keyboard.insert_text(query)
                    page.keyboard.press("End")
                    page.wait_for_selector(".md-search-result__item a", timeout=15000)
                    times.append(time.perf_counter() - began)
                    links = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.href)")
                    found &= any(urlparse(u).path.startswith(expect) for u in links[:3])
                    context.close()
                out[(start, query)] = (times, found)
            browser.close()
    finally:
        server.shutdown()
    return out


def main() -> None:
    parser = options(__doc__)
    parser.set_defaults(runs=5)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(root, site_dir=Path(tmp) / "site")
        folder = site / "1.16" / "search"
        sizes = {p.name.split(".")[1]: (p.stat().st_size, len(gzip.compress(p.read_bytes(), 6)))
                 for p in folder.glob("search_index.*.json")}
        whole = (folder / "search_index.json").stat().st_size
        results = first_results(site, args.runs)
    worst = max(gz for _, gz in sizes.values())
    exact_times, exact_found = results[QUERIES[0][:2]]
    figures = [
        Figure("4. search", "index a reader downloads, per language (raw / compressed)", ", ".join(
            f"{lang} {raw / 1e6:.2f} MB / {gz / 1000:.0f} KB" for lang, (raw, gz) in sorted(sizes.items()))
            + f" (all languages together: {whole / 1e6:.2f} MB)", "< 500 KB", worst < 500_000),
        Figure("4. search", "typing an exact key -> its page first (fresh page, index download included)",
               f"{1000 * median(exact_times):.0f} ms", "< 300 ms", median(exact_times) < 0.3 and exact_found),
    ]
    for (start, query), (times, found) in results.items():
        if (start, query) != QUERIES[0][:2]:
            figures.append(Figure("4. search", f"'{query}' on {start}", f"{1000 * median(times):.0f} ms, "
                                  + ("found" if found else "NOT found"), "found", found))
    report(figures, args.json)


if __name__ == "__main__":
    main()
