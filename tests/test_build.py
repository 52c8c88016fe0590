"""The built site: every metric in every language, edit links, maths rendered at build time, nothing external,
the JSON index, the search index prepared for Chinese and Vietnamese, and atomic publishing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.build.publish import publish
from generator.build.search_index import index_line
from generator.errors import BuildError
from generator.render.markdown import join_wide_lines
from generator.resolve.variants import exists_in

from .conftest import real_sources

LANGS = {"en": "", "zh": "zh/", "vi": "vi/"}
LATEST = "1.16"


def items():
    return real_sources().metrics


def _page(site: Path, lang: str, item) -> Path:
    """The metric's page on the newest line whose release logs it (a removed trainer's pages live on older lines)."""
    line = next(v.name for v in real_sources().config.versions if exists_in(item.model, v.trl))
    return site / line / LANGS[lang] / item.model.trainer / item.model.slug / "index.html"


@pytest.mark.parametrize("lang", LANGS)
def test_every_metric_has_a_page_in_every_language(built_site, lang):
    for item in items():
        html = _page(built_site, lang, item).read_text(encoding="utf-8")
        assert f'<html lang="{lang}"' in html
        assert "<h1 id=" in html and item.model.key in html
        assert item.model.title.get(lang) in html, f"{item.path}: {lang} title missing from its page"


def test_pages_link_to_their_yaml_for_editing(built_site):
    for item in items():
        for lang in LANGS:
            html = _page(built_site, lang, item).read_text(encoding="utf-8")
            assert re.search(rf'href="[^"]*/edit/main/{re.escape(item.path)}"[^>]*rel="edit"', html), item.path


def test_formulas_are_rendered_at_build_time(built_site):
    for item in items():
        html = _page(built_site, "en", item).read_text(encoding="utf-8")
        assert 'class="katex-display"' in html and "<math" in html, item.path
    left = [p for p in built_site.rglob("*.html") if "atlas-math-ref" in p.read_text(encoding="utf-8")]
    assert not left, f"formula placeholders left in {left[:3]}"
    css = built_site / LATEST / "assets/katex/katex.min.css"
    fonts = re.findall(r"url\((fonts/[^)]+)\)", css.read_text(encoding="utf-8"))
    assert fonts and all((css.parent / f).is_file() for f in fonts)


def test_no_page_loads_anything_from_another_host(built_site):
    loads = re.compile(r'<(?:script|img|iframe|source|link)\b[^>]*?(?:src|href)="(https?:)?//(?!127\.0\.0\.1[:/])')
    for page in (built_site / LATEST).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        bad = [m.group(0) for m in loads.finditer(html) if 'rel="canonical"' not in m.group(0)
               and 'rel="alternate"' not in m.group(0)]
        assert not bad, f"{page}: {bad[:2]}"
        assert "fonts.googleapis" not in html and "cdn.jsdelivr" not in html


def test_metrics_json_lists_every_key_with_working_urls(built_site):
    api = json.loads((built_site / LATEST / "api/metrics.json").read_text(encoding="utf-8"))
    assert api["trl"] == "1.16.0"
    assert {m["id"] for m in api["metrics"]} == {it.model.id for it in items() if exists_in(it.model, api["trl"])}
    # every trainer whose class exists in 1.16.0 (PPO and legacy PPO do not)
    classes = {t["class"] for t in api["trainers"]}
    assert {"GRPOTrainer", "DPOTrainer", "RLOOTrainer", "SFTTrainer"} <= classes and "PPOTrainer" not in classes
    for entry in api["metrics"]:
        assert set(entry["url"]) == set(LANGS) and all(entry["title"].values())
        for url in entry["url"].values():
            rel = url.split("/", 3)[3]  # strip scheme and host
            assert (built_site / rel / "index.html").is_file(), url
        assert entry["healthy"]["trend"] in {"rising", "falling", "flat", "stable", "any"}


def test_version_root_and_versions_json(built_site):
    versions = json.loads((built_site / "versions.json").read_text(encoding="utf-8"))
    assert versions[0]["version"] == LATEST and "latest" in versions[0]["aliases"]
    assert f'url={LATEST}/' in (built_site / "index.html").read_text(encoding="utf-8")


def test_each_language_has_its_own_search_index(built_site):
    """Pagefind's bundle of a line: one index per language, holding exactly the pages of that language that have an
    article (not the redirects, not the 404 page, not a metric's history page: a search leads to the metric's own
    page), each article named by its section; no unused interface files."""
    bundle = built_site / LATEST / "pagefind"
    entry = json.loads((bundle / "pagefind-entry.json").read_text(encoding="utf-8"))
    indexed: dict[str, int] = dict.fromkeys(LANGS, 0)
    histories = 0
    for page in (built_site / LATEST).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        article = re.search(r"<article [^>]*>", html)
        rel = page.relative_to(built_site / LATEST).as_posix()
        if rel.endswith("/history/index.html"):
            histories += 1
            assert article and "data-pagefind-body" not in article.group(0), rel
        elif article and "data-pagefind-body" in article.group(0):
            indexed[re.search(r'<html lang="([^"]+)"', html).group(1)] += 1
            if re.match(r"(?:(?:zh|vi)/)?grpo/", rel):
                assert 'data-pagefind-meta="section:GRPO"' in article.group(0), rel
        elif page.name == "404.html" or "http-equiv=\"refresh\"" in html:
            assert not article or "data-pagefind-body" not in article.group(0), page
    assert histories > 3 * 50
    assert {lang: v["page_count"] for lang, v in entry["languages"].items()} == indexed
    assert min(indexed.values()) > 100
    assert not [p.name for p in bundle.glob("pagefind-*ui*")], "Pagefind's own interfaces are not used"
    assert {p.name.split("_")[0] for p in (bundle / "index").iterdir()} == set(LANGS)


def test_a_line_pagefind_cannot_index_is_one_build_error(tmp_path):
    (tmp_path / "1.16").mkdir()
    with pytest.raises(BuildError) as err:
        index_line(tmp_path / "1.16")
    assert str(err.value).startswith("search index of 1.16: pagefind failed (exit code 1): Error: ")
    assert "\n" not in str(err.value) and str(err.value).count("not able to build an index") == 1


def test_publish_replaces_the_site_whole(tmp_path):
    site, new = tmp_path / "site", tmp_path / "new"
    (site / "old").mkdir(parents=True)
    (site / "old" / "page.html").write_text("old")
    (new / "fresh").mkdir(parents=True)
    (new / "fresh" / "page.html").write_text("new")
    publish(new, site)
    assert [p.name for p in site.iterdir()] == ["fresh"]
    assert not new.exists()


def test_failed_build_leaves_the_previous_site_untouched(mini_root, capsys):
    from generator.cli import main

    assert main(["--root", str(mini_root), "build", "--version", LATEST, "--lang", "en"]) == 0
    before = {p: p.read_bytes() for p in (mini_root / "site").rglob("*") if p.is_file()}
    path = mini_root / "metrics/grpo/clip_ratio/low_mean.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("expected: 0.6", "expected: 0.5"), encoding="utf-8")
    assert main(["--root", str(mini_root), "build", "--version", LATEST, "--lang", "en"]) == 1
    after = {p: p.read_bytes() for p in (mini_root / "site").rglob("*") if p.is_file()}
    assert after == before
    assert not [p for p in (mini_root / "build").iterdir()], "a failed build left its work folder behind"


def test_symbol_with_pipes_stays_in_its_table_cell(mini_root):
    """A TeX symbol such as |o_i| must not split the Markdown table row it is rendered into."""
    path = mini_root / "metrics/grpo/clip_ratio/low_mean.yaml"
    text = path.read_text(encoding="utf-8").replace("    - tex: M\n", '    - tex: "|M|"\n', 1)
    path.write_text(text.replace(r"\frac{1}{M}", r"\frac{1}{|M|}", 1), encoding="utf-8")
    from generator.pipeline import build_site

    site = build_site(mini_root, versions=[LATEST], langs=["en"])
    html = (site / LATEST / "grpo/clip_ratio/low_mean/index.html").read_text(encoding="utf-8")
    table = html[html.index('id="formula"'):html.index('id="snippet"')]
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    assert rows and all(row.count("<td") == 2 for row in rows[1:]), "a symbol row was split into extra cells"


def _api(site: Path, version: str) -> dict:
    return json.loads((site / version / "api/metrics.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("version", ["1.16", "1.12", "0.26"])
def test_each_version_shows_exactly_the_keys_its_release_logs(built_site, version):
    config = real_sources().config
    trl = next(v.trl for v in config.versions if v.name == version)
    expected = {it.model.id for it in items() if exists_in(it.model, trl)}
    assert {m["id"] for m in _api(built_site, version)["metrics"]} == expected
    for it in items():
        page = built_site / version / it.model.trainer / it.model.slug / "index.html"
        assert page.exists() == (it.model.id in expected), f"{version}: {it.model.id}"
        if page.exists():
            assert 'id="changed-in"' in page.read_text(encoding="utf-8")


def test_older_versions_lack_keys_added_later(built_site):
    assert not (built_site / "0.26/grpo/vespo/phi_seq_mean/index.html").exists()
    assert (built_site / "1.12/grpo/vespo/phi_seq_mean/index.html").exists()


def test_which_version_page_maps_every_release(built_site):
    releases = real_sources().config.trl_releases
    for lang in LANGS:
        html = (built_site / LATEST / LANGS[lang] / "versions/index.html").read_text(encoding="utf-8")
        rows = re.findall(r"<tr>\s*<td>(\d+\.\d+\.\d+)</td>\s*<td><a href=\"/([\d.]+)/", html)
        assert [r for r, _ in rows] == list(reversed(releases)), lang
        mapping = dict(rows)
        assert mapping["0.23.1"] == "0.26" and mapping["1.0.0"] == "1.12" and mapping["1.14.2"] == "1.16"
        text = re.sub(r"<[^>]+>", "", html)  # the commands are highlighted into spans
        assert "pip show trl" in text and "trl.__version__" in text


def test_changed_in_links_each_range_to_its_line_or_to_the_history_page_that_shows_it_in_full(built_site):
    """kl on 1.16: the ranges that 0.26 and 1.12 describe link to those lines' page of kl (in the reader's
    language); the ranges no line describes link to kl's history page, which shows each in full, formula included,
    and links back. The metric page itself carries none of them."""
    for lang, prefix in LANGS.items():
        folder = built_site / LATEST / prefix / "grpo/kl"
        html = (folder / "index.html").read_text(encoding="utf-8")
        section = html[html.index('id="changed-in"'):]
        for line in ("0.26", "1.12"):
            assert f'href="/{line}/{prefix}grpo/kl/"' in section, (lang, line)
        anchors = ["changed-0-14-0", "changed-0-16-0", "changed-1-9-0"]
        assert re.findall(r'href="history/#(changed-[\d-]+)"', section) == anchors, lang
        assert "atlas-history" not in html and html.count('class="katex-display"') == 1, lang  # its own formula
        history = (folder / "history/index.html").read_text(encoding="utf-8")
        parts = re.split(r'<h2 id="(changed-[\d-]+)"', history)[1:]
        assert parts[::2] == anchors, lang
        for body in parts[1::2]:
            assert 'class="katex-display"' in body, lang
        assert "temperature" in parts[1], "the 0.14 range's meaning (untempered logits)"
        assert 'href="../"' in history, "the link back to the page of kl"


def test_a_history_page_never_takes_the_path_of_another_page():
    """A key ending in /history under another key of its trainer would be written over that key's history page:
    refused, naming the path, and the first page is kept."""
    from generator.render.pages import _add

    out: dict[str, str] = {}
    _add(out, "grpo/kl/history.md", "the history of kl")
    with pytest.raises(BuildError, match="grpo/kl/history.md"):
        _add(out, "grpo/kl/history.md", "the page of a key kl/history")
    assert out == {"grpo/kl/history.md": "the history of kl"}


def test_the_trainer_index_introduces_the_trainer_and_its_release_defaults(built_site):
    index = {line: (built_site / line / "grpo/index.html").read_text(encoding="utf-8") for line in ("1.16", "0.26")}
    for html in index.values():
        assert "Group Relative Policy Optimization" in html
        assert 'id="settings"' in html
    settings = {line: html[html.index('id="settings"'):] for line, html in index.items()}
    assert re.search(r"<code>max_completion_length</code></td>\s*<td><code>512</code>", settings["1.16"])
    assert re.search(r"<code>max_completion_length</code></td>\s*<td><code>256</code>", settings["0.26"])
    assert re.search(r"<code>use_bias_correction_kl</code></td>\s*<td><code>False</code>", settings["0.26"])
    zh = (built_site / "1.16/zh/grpo/index.html").read_text(encoding="utf-8")
    assert "组相对策略优化" in zh and "改变曲线含义的设置" in zh
    assert "<code>from trl import GRPOTrainer, GRPOConfig</code>" in index["1.16"]


def test_the_home_page_links_the_examples(built_site):
    for prefix in LANGS.values():
        home = (built_site / LATEST / prefix / "index.html").read_text(encoding="utf-8")
        assert 'href="https://github.com/rl-metrics-atlas/rl-metrics-atlas/tree/main/examples/"' in home, prefix


def test_the_interface_speaks_the_page_language(built_site):
    """Material's own strings (its Vietnamese file leaves some in English) and the navigation titles that are not
    page headings (the English-only translators' guide) are in the page's language."""
    material_english = ("Initializing search", "Type to start searching", "Back to top", "Copy to clipboard")
    nav_title = {"en": "Translation guide", "zh": "翻译指南", "vi": "Hướng dẫn dịch"}
    for lang, prefix in LANGS.items():
        html = (built_site / LATEST / prefix / "grpo/kl/index.html").read_text(encoding="utf-8")
        if lang != "en":
            assert not [s for s in material_english if s in html], lang
        # the guide's navigation entry, on a page of its section (each page holds its own section's navigation)
        status = (built_site / LATEST / prefix / "translation-status/index.html").read_text(encoding="utf-8")
        assert re.search(rf">\s*{nav_title[lang]}\s*<", status), lang
    vi = (built_site / LATEST / "vi/grpo/kl/index.html").read_text(encoding="utf-8")
    assert "Khoảng bình thường" in vi
    # the header's search (assets/search.js) reads its words from the page
    search = json.loads(re.search(r'<script id="atlas-search-config" type="application/json">(.*?)</script>', vi,
                                  re.S).group(1))
    assert search == {"bundle": "/1.16/pagefind/pagefind.js", "letters": {"d": "đ"}, "label": "Tìm kiếm",
                      "hint": "Gõ để bắt đầu tìm",
                      "none": "Không có trang nào khớp", "one": "1 trang khớp", "other": "# trang khớp"}


def test_generated_numbers_follow_each_language_decimal_rule(built_site):
    """Ranges and rule values the generator formats agree with the prose: decimal points, commas between bounds."""
    for prefix in LANGS.values():
        html = (built_site / LATEST / prefix / "grpo/clip_ratio/low_mean/index.html").read_text(encoding="utf-8")
        text = re.sub(r"<[^>]+>", "", html)
        assert not re.search(r"\[\s*-?\d[\d.,]*\s*;\s*-?\d", text), prefix
        assert not re.search(r"(?<![\w.,])0,\d", text), prefix


def test_wide_line_joining_keeps_paragraphs_and_latin_breaks():
    assert join_wide_lines("策略\n  梯度。\n\n第二段") == "策略梯度。\n\n第二段"
    assert join_wide_lines("KL 散度，\nclip 比例") == "KL 散度，\nclip 比例"
    assert join_wide_lines("a\nb 中\n文") == "a\nb 中文"


def test_lines_wrapped_inside_a_chinese_sentence_show_no_space(built_site):
    """Sources wrap long Chinese lines; a browser would show each break as a space between two characters."""
    wide = "\u4e00-\u9fff\u3000-\u303f\uff00-\uffef"
    broken = re.compile(f"[{wide}][ \t]*\n[ \t]*[{wide}]")
    wrapped = [it for it in items() if it.model.meaning and "\n" in it.model.meaning.get("zh").strip()]
    assert wrapped, "no Chinese meaning wraps: the test proves nothing"
    for item in wrapped[:20]:
        html = _page(built_site, "zh", item).read_text(encoding="utf-8")
        text = re.sub(r"<pre.*?</pre>", "", html, flags=re.S)  # code keeps its lines
        assert not broken.search(text), f"{item.path}: {broken.search(text).group(0)!r} on its zh page"
