"""The built site in real headless Chromium (Debian's, driven by Playwright): search in three languages,
the language switch on an inner page, KaTeX visible, and not one request to any host but the local server."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

METRIC = "/1.16/grpo/clip_ratio/low_mean/"


def search(page, site_url: str, start: str, query: str) -> list[str]:
    """Type ``query`` into Material's search on ``start``; return the result links, best first."""
    page.goto(site_url + start)
    box = page.locator("input.md-search__input")
    box.click()
    box.fill("")
    page.keyboard.insert_text(query)
    page.keyboard.press("End")  # Material searches on keyup; insert_text sends no key events
    page.wait_for_selector(".md-search-result__item a", timeout=15000)
    return page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.href)")


def test_exact_key_puts_its_page_first(page, site_url):
    links = search(page, site_url, "/1.16/", "clip_ratio/low_mean")
    assert urlparse(links[0]).path == METRIC, links[:3]


def test_chinese_search_finds_chinese_pages(page, site_url):
    links = search(page, site_url, "/1.16/zh/", "裁剪")
    assert any("/1.16/zh/grpo/" in link for link in links), links[:5]


@pytest.mark.parametrize("query", ["ngưỡng cắt dưới", "nguong cat duoi"])
def test_vietnamese_search_with_or_without_diacritics(page, site_url, query):
    links = search(page, site_url, "/1.16/vi/", query)
    assert any(urlparse(link).path == "/1.16/vi" + METRIC[5:] for link in links[:5]), links[:5]


@pytest.mark.parametrize(("start", "lang"), [("/1.16/", "en"), ("/1.16/zh/", "zh"), ("/1.16/vi/grpo/", "vi")])
def test_a_reader_downloads_the_search_index_of_their_language_only(page, site_url, start, lang):
    search(page, site_url, start, "kl")
    indexes = [urlparse(u).path for u in page.requests if "/search/search_index" in u]
    assert indexes == [f"/1.16/search/search_index.{lang}.json"], indexes
    links = page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.href)")
    prefix = {"en": "/1.16/", "zh": "/1.16/zh/", "vi": "/1.16/vi/"}[lang]
    others = [p for p in ("/1.16/zh/", "/1.16/vi/") if p != prefix]
    assert links and all(urlparse(u).path.startswith(prefix) and not urlparse(u).path.startswith(tuple(others))
                         for u in links), links[:5]


def test_language_switch_stays_on_the_page(page, site_url):
    page.goto(site_url + METRIC)
    page.locator(".md-header__option .md-select").first.hover()
    page.locator('a.md-select__link[hreflang="zh"]').click()
    page.wait_for_load_state()
    assert urlparse(page.url).path == "/1.16/zh" + METRIC[5:]
    assert page.locator("html").get_attribute("lang") == "zh"
    page.locator(".md-header__option .md-select").first.hover()
    page.locator('a.md-select__link[hreflang="vi"]').click()
    page.wait_for_load_state()
    assert urlparse(page.url).path == "/1.16/vi" + METRIC[5:]


def test_katex_is_visible_without_javascript_rendering(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(site_url + METRIC)
    formula = pg.locator(".atlas-math .katex-display").first
    assert formula.is_visible()
    box = formula.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 20
    # once the fonts the page uses have loaded (a busy machine may still be loading them), KaTeX's is among them
    assert pg.evaluate("document.fonts.ready.then(() => document.fonts.check('16px KaTeX_Main'))")
    context.close()


def test_no_request_leaves_the_local_server(page, site_url):
    for path in ("/", METRIC, "/1.16/zh/grpo/", "/1.16/vi" + METRIC[5:]):
        page.goto(site_url + path)
        page.wait_for_load_state("networkidle")
    search(page, site_url, "/1.16/zh/", "裁剪")
    hosts = {urlparse(u).netloc for u in page.requests if not u.startswith(("data:", "blob:"))}
    assert hosts == {urlparse(site_url).netloc}, hosts
