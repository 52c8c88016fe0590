"""The multi-version site in headless Chromium: the version selector, switching versions without leaving the page
or the language, and the landing for a key that the target version does not log."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

PREFIX = {"en": "", "zh": "zh/", "vi": "vi/"}


def switch_version(page, title: str) -> None:
    page.locator(".md-version").hover()
    with page.expect_navigation():
        page.locator(".md-version__link", has_text=title).first.click()
    page.wait_for_load_state()


def test_selector_lists_every_version(page, site_url):
    page.goto(site_url + "/1.16/grpo/")
    page.locator(".md-version").hover()
    titles = page.locator(".md-version__link").all_inner_texts()
    assert [t.strip() for t in titles][:3] == ["TRL 1.16", "TRL 1.12", "TRL 0.26"]


def test_latest_alias_and_root_redirect(page, site_url):
    page.goto(site_url + "/")
    page.wait_for_url("**/1.16/")
    page.goto(site_url + "/latest/grpo/kl/")
    page.wait_for_url("**/1.16/grpo/kl/")


@pytest.mark.parametrize("lang", ["en", "zh", "vi"])
def test_switch_stays_on_the_page_and_language(page, site_url, lang):
    page.goto(f"{site_url}/1.16/{PREFIX[lang]}grpo/reward_std/")
    switch_version(page, "TRL 0.26")
    assert urlparse(page.url).path == f"/0.26/{PREFIX[lang]}grpo/reward_std/"
    assert page.locator("html").get_attribute("lang") == lang
    switch_version(page, "TRL 1.12")
    assert urlparse(page.url).path == f"/1.12/{PREFIX[lang]}grpo/reward_std/"


@pytest.mark.parametrize("lang", ["en", "zh", "vi"])
def test_key_absent_from_the_target_version_lands_on_its_index(page, site_url, lang):
    page.goto(f"{site_url}/1.16/{PREFIX[lang]}grpo/vespo/phi_seq_mean/")
    switch_version(page, "TRL 0.26")
    url = urlparse(page.url)
    assert url.path == f"/0.26/{PREFIX[lang]}grpo/"
    assert parse_qs(url.query) == {"absent": ["vespo/phi_seq_mean"], "was": ["yet"]}
    note = page.locator("#atlas-absent-yet")
    assert note.is_visible()
    assert "vespo/phi_seq_mean" in note.inner_text() and "0.26.2" in note.inner_text()
    assert not page.locator("#atlas-absent-more").is_visible()
