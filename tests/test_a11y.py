"""Accessibility: axe-core (npm) in headless Debian Chromium finds no serious or critical WCAG 2.1 A/AA violation on
the home page, a trainer index, a metric page, the version guide, a glossary entry and the translation status in each
language."""

from __future__ import annotations

import pytest

from .conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

AXE = ROOT / "node_modules/axe-core/axe.min.js"
PAGES = ["", "grpo/", "grpo/clip_ratio/low_mean/", "versions/", "glossary/policy/", "translation-status/"]


@pytest.mark.parametrize("lang", ["", "zh/", "vi/"], ids=["en", "zh", "vi"])
@pytest.mark.parametrize("path", PAGES, ids=["home", "index", "metric", "versions", "glossary", "i18n-status"])
def test_no_serious_accessibility_violations(page, site_url, lang, path):
    page.goto(f"{site_url}/1.16/{lang}{path}")
    page.add_script_tag(path=str(AXE))
    # only the violations are gathered node by node (axe still runs every rule of the tags on every element)
    result = page.evaluate("() => axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', "
                           "'wcag21aa']}, resultTypes: ['violations']})")
    bad = [(v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["target"]) for v in result["violations"]
           if v["impact"] in ("serious", "critical")]
    assert not bad, bad
