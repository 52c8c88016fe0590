"""The built site in real headless Chromium (Debian's, driven by Playwright): search in three languages,
the language switch on an inner page, KaTeX visible, and not one request to any host but the local server."""

from __future__ import annotations

import random
import re
import unicodedata
from html.parser import HTMLParser
from urllib.parse import urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

METRIC = "/1.16/grpo/clip_ratio/low_mean/"


def search(page, site_url: str, start: str, query: str) -> list[str]:
    """Type ``query`` into the header's search on ``start``; return the result links, best first."""
    page.goto(site_url + start)
    page.locator("button.atlas-search__button").click()
    page.locator("input.atlas-search__input").fill(query)
    page.wait_for_selector(".atlas-search__results[aria-busy=false] .atlas-search__result", timeout=15000)
    return page.eval_on_selector_all(".atlas-search__result", "els => els.map(e => e.href)")


def test_exact_key_puts_its_page_first(page, site_url):
    """Two trainers log `clip_ratio/low_mean`: the first result is the page of that key in one of them."""
    links = search(page, site_url, "/1.16/", "clip_ratio/low_mean")
    assert re.fullmatch(r"/1\.16/\w+/clip_ratio/low_mean/", urlparse(links[0]).path), links[:3]
    assert METRIC in [urlparse(u).path for u in links[:3]], links[:3]
    first = page.locator(".atlas-search__result").first
    assert first.locator(".atlas-search__title").inner_text() == "clip_ratio/low_mean"
    assert first.locator(".atlas-search__section").inner_text() in ("GRPO", "RLOO")


def test_chinese_search_finds_chinese_pages(page, site_url):
    links = search(page, site_url, "/1.16/zh/", "裁剪")
    assert any("/1.16/zh/grpo/" in link for link in links), links[:5]


@pytest.mark.parametrize("query", ["ngưỡng cắt dưới", "nguong cat duoi", "ngu\u031bo\u031b\u0303ng"])
def test_vietnamese_search_with_or_without_diacritics(page, site_url, query):
    """Typed with its diacritics (as one character each, or as combining marks), or without any."""
    links = search(page, site_url, "/1.16/vi/", query)
    assert any(urlparse(link).path.startswith("/1.16/vi/grpo/clip_ratio/") for link in links[:5]), links[:5]


def test_d_is_also_read_as_đ_only_in_a_query_without_diacritics(page, site_url):
    """đ is a letter of its own, which no diacritic folding reaches: `dem` finds every page of `đếm` too; `dém`,
    typed with a diacritic (so on a keyboard that has đ), is read as typed and does not."""
    page.goto(site_url + "/1.16/vi/")
    page.wait_for_function("() => window.atlasSearch")

    def found(query: str) -> set[str]:
        return set(page.evaluate("(q) => window.atlasSearch(q)", query))

    with_đ = found("đếm")
    assert len(with_đ) > 20
    assert with_đ <= found("dem")
    assert not with_đ <= found("dém")


def test_keyboard_opens_the_search_and_enter_follows_the_first_result(page, site_url):
    page.goto(site_url + "/1.16/vi/")
    page.keyboard.press("/")
    page.keyboard.type("entropy")
    page.wait_for_selector(".atlas-search__results[aria-busy=false] .atlas-search__result")
    first = page.eval_on_selector(".atlas-search__result", "e => e.href")
    page.keyboard.press("Enter")
    page.wait_for_url(first)
    assert urlparse(page.url).path.startswith("/1.16/vi/")


# --- Vietnamese typed without diacritics, with words drawn from the built pages -------------------------------------

_WORD = re.compile(r"[^\W\d_]+")
_SKIPPED = {"katex", "headerlink", "md-clipboard"}  # what the index leaves out (build/search_index.py)


class _Article(HTMLParser):
    """The text of a page's indexed article, without the parts the index leaves out."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside the article
        self.skip = 0  # inside a skipped element
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        names = set((dict(attrs).get("class") or "").split())
        if self.depth:
            self.depth += 1
            if self.skip or names & _SKIPPED:
                self.skip += 1
        elif tag == "article" and "data-pagefind-body" in dict(attrs):
            self.depth = 1

    def handle_endtag(self, tag):
        if tag in self.VOID or not self.depth:
            return
        self.depth -= 1
        self.skip = max(0, self.skip - 1)

    def handle_data(self, data):
        if self.depth and not self.skip:
            self.text.append(data)


def _fold(word: str) -> str:
    word = word.replace("đ", "d").replace("Đ", "D")
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn").lower()


def _vietnamese_pages(built_site) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The 1.16 Vietnamese pages (paths) whose indexed article holds each word carrying a diacritic, and those that
    hold each folded form (any word that folds to it, with or without diacritics): read from the HTML, not from the
    index."""
    by_word: dict[str, set[str]] = {}
    by_fold: dict[str, set[str]] = {}
    for html in (built_site / "1.16" / "vi").rglob("index.html"):
        article = _Article()
        article.feed(html.read_text(encoding="utf-8"))
        path = "/" + html.parent.relative_to(built_site).as_posix() + "/"
        text = unicodedata.normalize("NFC", " ".join(article.text))
        for word in {w.lower() for w in _WORD.findall(text)}:
            by_fold.setdefault(_fold(word), set()).add(path)
            if _fold(word) != word:
                by_word.setdefault(word, set()).add(path)
    return by_word, by_fold


def _all_result_pages(page, query: str) -> set[str]:
    """The page of every result of ``query``, asked of the page's search (`atlasSearch`: the list shows ten)."""
    urls = page.evaluate("(q) => window.atlasSearch(q)", query)
    return {urlparse(u).path for u in urls}


def test_vietnamese_words_typed_without_diacritics_find_every_page(page, site_url, built_site):
    """Words sampled from the built pages (a fixed seed, so a failure can be replayed), typed without any diacritic
    (đ as d), find every page that holds the word in any spelling that folds the same way; so do words with ặ (two
    marks on one letter) and short folded words that are also English words (độ -> do, ổn -> on)."""
    by_word, by_fold = _vietnamese_pages(built_site)
    rng = random.Random(17)
    folds = sorted({_fold(w) for w in by_word})
    assert len(folds) > 300, "too few Vietnamese words to sample from"
    short = [f for f in folds if f in ("do", "an", "no", "on", "to", "at", "as")]
    assert short, "no Vietnamese word folds to a short English word: pick others"
    breve_dot = sorted({_fold(w) for w in by_word if "ặ" in w})[:3]
    assert any(w.startswith("đ") for w in by_word)
    misses = []
    search(page, site_url, "/1.16/vi/", "tuong")  # the page open, its index loaded
    for folded in rng.sample(folds, 24) + short + breve_dot:
        missing = by_fold[folded] - _all_result_pages(page, folded)
        if missing:
            misses.append(f"{folded}: {len(missing)} of {len(by_fold[folded])} pages missing, e.g. {min(missing)}")
    assert not misses, misses


# every file of a language's index names the language: pagefind.<lang>_….pf_meta, index/<lang>_….pf_index, and
# fragment/<lang>_….pf_fragment (a page's excerpt)
_INDEX_FILE = re.compile(r"/1\.16/pagefind/(?:pagefind\.|index/|fragment/)(\w+?)_\w+\.pf_(?:meta|index|fragment)$")


@pytest.mark.parametrize(("start", "lang"), [("/1.16/", "en"), ("/1.16/zh/", "zh"), ("/1.16/vi/grpo/", "vi")])
def test_a_reader_downloads_the_search_index_of_their_language_only(page, site_url, start, lang):
    links = search(page, site_url, start, "kl")
    files = [urlparse(u).path for u in page.requests if "/pagefind/" in u]
    langs = [m.group(1) for f in files if (m := _INDEX_FILE.search(f))]
    assert langs and set(langs) == {lang}, files
    assert any("/index/" in f for f in files), files
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
