"""The built site in real headless Chromium (Debian's, driven by Playwright): search in three languages,
the language switch on an inner page, KaTeX visible, and not one request to any host but the local server."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from urllib.parse import urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

METRIC = "/1.16/grpo/clip_ratio/low_mean/"


def search(page, site_url: str, start: str, query: str) -> list[str]:
    """Type ``query`` into Material's search on ``start``; return the result links, best first."""
    page.goto(site_url + start)
    page.locator("input.md-search__input").click()
    _type(page, query)
    page.wait_for_selector(".md-search-result__item a", timeout=15000)
    return page.eval_on_selector_all(".md-search-result__item > a", "els => els.map(e => e.href)")


def _type(page, query: str) -> None:
    """Replace what the search box holds by ``query``."""
    page.locator("input.md-search__input").fill("")
    page.keyboard.insert_text(query)
    page.keyboard.press("End")  # Material searches on keyup; insert_text sends no key events


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


# --- Vietnamese typed without diacritics, with words drawn from the built pages -------------------------------------

_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r"[^\W\d_]+")
_SEPARATOR = re.compile(r"[\s\u200b\u3000\-、。，．？！；]+")  # mkdocs.yml's search separator
_TRIM = re.compile(r"^\W+|\W+$")  # lunr.trimmer
# English stop words that lunr drops from an English index and that are Vietnamese syllables once folded (độ, ổn, nó)
_FOLDED_STOP_WORDS = ("do", "an", "no", "on", "to", "at", "as")


def _fold(word: str) -> str:
    word = word.replace("đ", "d").replace("Đ", "D")
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn").lower()


def _vietnamese_pages(built_site) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The 1.16 Vietnamese pages (paths) that contain each word carrying a diacritic, and those that contain each
    folded form (any word that folds to it, with or without diacritics)."""
    index = json.loads((built_site / "1.16" / "search" / "search_index.vi.json").read_text(encoding="utf-8"))
    by_word: dict[str, set[str]] = {}
    by_fold: dict[str, set[str]] = {}
    for doc in index["docs"]:
        path = "/1.16/" + doc["location"].split("#")[0]
        text = _TAG.sub(" ", doc["title"] + " " + doc["text"])
        # tokens as the search cuts them (its separator, then lunr's trimmer): `clip_ratio/low_min` is one token,
        # so it does not hold the word "min"
        tokens = (_TRIM.sub("", t) for t in _SEPARATOR.split(unicodedata.normalize("NFC", text)))
        for word in {t.lower() for t in tokens if _WORD.fullmatch(t)}:
            by_fold.setdefault(_fold(word), set()).add(path)
            if _fold(word) != word:
                by_word.setdefault(word, set()).add(path)
    return by_word, by_fold


# Material's search worker answers on a message channel (type 2 a query, type 3 its result); this records the
# queries sent and the answers, so a test can read every result, not only the ten the result list draws first.
_RECORD_SEARCH_WORKER = """
(() => { const Native = window.Worker; window.__atlasSearch = []; window.__atlasQueries = 0;
  window.Worker = class extends Native {
    constructor(...args) { super(...args); this.addEventListener("message", (e) => window.__atlasSearch.push(e.data)); }
    postMessage(message, ...rest) { if (message && message.type === 2) window.__atlasQueries++;
      return super.postMessage(message, ...rest); } }; })();
"""
_ANSWERED = "n => window.__atlasQueries > n && window.__atlasSearch.filter(m => m && m.type === 3).length" \
            " >= window.__atlasQueries"


def _search_again(page, query: str) -> None:
    """Type ``query`` into the search box of the page already open, and wait for the answer to it (the index is
    built once per page: loading the page again for every query took six seconds a query)."""
    sent = page.evaluate("window.__atlasQueries")
    _type(page, query)
    page.wait_for_function(_ANSWERED, arg=sent, timeout=15000)


def _all_result_pages(page) -> set[str]:
    """The page of every result of the last search, read from the search worker's answer (only its locations cross
    to Python: the answers hold every result's text, and reading them all after each search took seconds)."""
    locations = page.evaluate("""() => { const answers = window.__atlasSearch.filter(
        m => m && m.type === 3 && m.data && Array.isArray(m.data.items));
      return answers.length ? answers[answers.length - 1].data.items.flat().map(doc => doc.location) : null; }""")
    assert locations is not None, "Material's search worker sent no results: its message format changed"
    return {"/1.16/" + location.split("#")[0] for location in locations}


def test_vietnamese_words_typed_without_diacritics_find_every_page(page, site_url, built_site):
    """Words sampled from the built pages (a fixed seed, so a failure can be replayed), typed without any diacritic
    (đ as d), find every page that holds the word in any spelling that folds the same way; so do words with ặ and
    folded words that are also English stop words (độ -> do, ổn -> on)."""
    by_word, by_fold = _vietnamese_pages(built_site)
    page.context.add_init_script(_RECORD_SEARCH_WORKER)
    rng = random.Random(17)
    folds = sorted({_fold(w) for w in by_word})
    assert len(folds) > 300, "too few Vietnamese words to sample from"
    stop = [f for f in folds if f in _FOLDED_STOP_WORDS]
    assert stop, "no Vietnamese word folds to an English stop word: pick other stop words"
    breve_dot = sorted({_fold(w) for w in by_word if "ặ" in w})[:3]  # ặ: two marks on one letter
    misses = []
    search(page, site_url, "/1.16/vi/", "tuong")  # the page open, its index loaded
    for folded in rng.sample(folds, 24) + stop + breve_dot:
        _search_again(page, folded)
        missing = by_fold[folded] - _all_result_pages(page)
        if missing:
            misses.append(f"{folded}: {len(missing)} of {len(by_fold[folded])} pages missing, e.g. {min(missing)}")
    assert not misses, misses


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
