"""The glossary: it loads and agrees with the term bases, every entry renders in every language, "used by" lists are
found from the metric texts, terms on metric pages link to their entries with a tooltip in the page's language,
and `atlas check` catches a term written the wrong way."""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.check.atlas import Atlas
from generator.cli import main
from generator.pipeline import build_site, load_atlas
from generator.read.glossary import GlossaryEntry
from generator.read.load import Loaded
from generator.read.text import Text
from generator.render.glossary_pages import render_glossary_entry, render_glossary_index
from generator.render.mathref import placeholder
from generator.render.metric_page import render_metric
from generator.render.termlinks import TermIndex, link_terms, texts_of
from generator.render.view import View
from generator.resolve.edition import editions

from .conftest import EXEMPLAR, ROOT, real_sources

REQUIRED = {
    "policy", "reference_model", "reward_model", "reward", "return", "value_function", "advantage", "gae",
    "group_relative_advantage", "importance_ratio", "clipping", "truncation", "entropy", "kl_divergence",
    "kl_estimators", "explained_variance", "mask", "padding", "micro_batch", "gradient_accumulation",
    "logging_window", "process", "rollout", "completion", "temperature",
}
CJK = re.compile(r"[\u4e00-\u9fff]")
LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?: (?P<field>[^:]+):)? (?P<message>.+)$")


def _ctx(atlas, lang: str) -> View:
    return View(atlas, atlas.editions[0], atlas.config.language(lang))


def _entry(atlas, eid: str) -> GlossaryEntry:
    return next(it.model for it in atlas.sources.glossary if it.model.id == eid)


# --- loading and the term bases ---------------------------------------------------------------------------------

def test_glossary_loads_every_required_concept(atlas):
    ids = {it.model.id for it in atlas.sources.glossary}
    assert REQUIRED <= ids, sorted(REQUIRED - ids)


@pytest.mark.parametrize("lang", ["zh", "vi"])
def test_glossary_terms_are_the_term_base_terms(atlas, lang):
    for it in atlas.sources.glossary:
        e = it.model
        assert e.term.root[lang] == atlas.terms[lang][e.id].preferred, (it.path, lang)


def test_policy_is_never_a_government_policy(atlas):
    assert _entry(atlas, "policy").term.root["zh"] == "策略"
    assert _entry(atlas, "truncation").term.root["vi"] == "cắt cụt"
    assert _entry(atlas, "clipping").term.root["zh"] == "裁剪"


# --- rendering ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh", "vi"])
def test_every_entry_renders_in_its_language(atlas, lang):
    ctx = _ctx(atlas, lang)
    for it in atlas.sources.glossary:
        e = it.model
        md = render_glossary_entry(ctx, it)
        assert e.short.root[lang] in md, (it.path, lang)
        assert f"edit/main/{it.path}" in md
        if e.formula:  # the formula's placeholder, which the finished page gets its KaTeX HTML for
            assert placeholder(e.formula, True) in md, it.path
        if lang != "en":
            assert e.short.root["en"] not in md and e.definition.root["en"].split("\n")[0] not in md, (it.path, lang)
        if lang == "zh":
            assert CJK.search(e.short.root["zh"]), it.path
    index = render_glossary_index(ctx)
    assert all(f"]({it.model.id}.md)" in index for it in atlas.sources.glossary)


def _oracle(metrics, forms: list[str]) -> set[str]:
    """Keys of the metrics whose English prose (outside code spans) contains a form as a whole word (English plurals
    allowed), by a plain regex search: 'ratio' inside 'calibration' is not a use."""
    words = [re.compile(rf"(?<!\w){re.escape(f.casefold())}(?:s|es)?(?!\w)") for f in forms]
    keys = set()
    for m in metrics:
        prose = re.sub(r"`[^`]*`", " ", "\n".join(texts_of(m, "en"))).casefold()
        if any(w.search(prose) for w in words):
            keys.add(m.key)
    return keys


def test_used_by_is_found_from_the_metric_texts(atlas):
    ctx = _ctx(atlas, "en")
    metrics = [r.metric for r in ctx.edition.metrics]
    users = {m.key for m in ctx.glossary_users["importance_ratio"]}
    assert {"clip_ratio/low_mean", "clip_ratio/high_mean"} <= users
    assert "learning_rate" not in users and "completions/mean_length" not in users
    assert users == _oracle(metrics, _entry(atlas, "importance_ratio").forms("en", "en"))
    assert "kl" in {m.key for m in ctx.glossary_users["kl_estimators"]}
    zh_users = {m.key for m in _ctx(atlas, "zh").glossary_users["importance_ratio"]}
    assert "clip_ratio/low_mean" in zh_users and "learning_rate" not in zh_users


def test_entry_page_lists_the_metrics_that_use_it(atlas):
    ctx = _ctx(atlas, "zh")
    md = render_glossary_entry(ctx, next(it for it in atlas.sources.glossary if it.model.id == "importance_ratio"))
    assert "[`clip_ratio/low_mean`](../grpo/clip_ratio/low_mean.md)" in md
    assert "`learning_rate`" not in md


# --- linking terms in Markdown -----------------------------------------------------------------------------------

def _index(lang: str) -> TermIndex:
    def entry(eid: str, terms: dict[str, str], match: dict[str, list[str]] | None = None) -> GlossaryEntry:
        return GlossaryEntry(id=eid, term=Text(terms), short=Text({k: f"{eid}-{k}" for k in terms}),
                             definition=Text(terms), match=match or {})
    return TermIndex.build([
        entry("policy", {"en": "policy", "zh": "策略", "vi": "chính sách"}),
        entry("advantage", {"en": "advantage", "zh": "优势", "vi": "lợi thế"}),
        entry("gra", {"en": "group-relative advantage", "zh": "组相对优势", "vi": "lợi thế tương đối theo nhóm"}),
    ], real_sources().config.language(lang), "en")


def _link(md: str, lang: str, **kw) -> str:
    return link_terms(md, _index(lang), lambda e: f"g/{e.id}.md", **kw)


def test_links_first_use_per_section_with_the_short_definition_as_title():
    out = _link("The advantage and the advantage.\n\n## Next\n\nAdvantages here.", "en")
    assert out.count("](g/advantage.md") == 2
    assert '[advantage](g/advantage.md "advantage-en"){ .atlas-term } and the advantage.' in out
    assert '[Advantages](g/advantage.md "advantage-en")' in out


def test_links_inside_unspaced_chinese_and_prefers_the_longest_term():
    out = _link("每个词元的组相对优势与优势。", "zh")
    assert '[组相对优势](g/gra.md "gra-zh")' in out and '[优势](g/advantage.md "advantage-zh")' in out


def test_never_links_inside_code_links_html_headings_or_words():
    src = ("---\ntitle: policy\n---\n# policy\n\n`policy` [policy](x.md) <span>policy</span> on-policy "
           "disadvantage\n\n```python\npolicy = 1\n```\n!!! note \"policy\"\n")
    assert _link(src, "en") == src


def test_skipped_sections_stay_plain():
    src = "## Related { #related }\n\npolicy\n\n## Meaning\n\npolicy"
    out = _link(src, "en", skip_sections=["related"])
    assert out.count("](g/policy.md") == 1 and out.index("](g/policy.md") > out.index("## Meaning")


def test_vietnamese_matches_whole_words_only():
    out = _link("Lợi thế của chính sách; chính sáchx không.", "vi")
    assert '[Lợi thế](g/advantage.md "advantage-vi")' in out and out.count("g/policy.md") == 1


# forms that share beginnings, contain each other, end in a letter or not, Latin, hyphenated and CJK
FORMS = ["policy", "policy gradient", "po", "batch", "batch size", "micro-batch", "kl", "k3", "优势", "组相对优势",
         "优", "lợi thế", "lợi thế tương đối"]


def _one_form_at_a_time(entries: list[GlossaryEntry], lang) -> re.Pattern[str]:
    """The obvious matcher, as an oracle: every form its own alternative, longest first, with its word edges."""
    latin = re.compile(r"[^\W\u2e80-\u9fff\uf900-\ufaff]")
    endings = "|".join(sorted(lang.plurals, key=len, reverse=True))
    forms = sorted(((f, i) for i, e in enumerate(entries) for f in e.forms(lang.code, "en")), key=lambda p: -len(p[0]))
    return re.compile("|".join(
        f"(?P<t{i}_{k}>" + (r"(?<![\w-])" if latin.match(f[0]) else "") + re.escape(f)
        + (f"(?:{endings})?" if endings and f[-1].isalpha() else "") + (r"(?![\w-])" if latin.match(f[-1]) else "")
        + ")" for k, (f, i) in enumerate(forms)), re.IGNORECASE)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FORMS), min_size=1, max_size=8, unique=True),
       st.lists(st.sampled_from(FORMS + ["s", "es", "-", " ", "x", "的", "ng", "\n", "`", "P", "Ợ"]), max_size=30),
       st.sampled_from(["en", "vi"]))
def test_the_term_matcher_finds_what_one_form_at_a_time_finds(forms, pieces, lang_code):
    lang = real_sources().config.language(lang_code)
    entries = [GlossaryEntry(id=f"e{i}", term=Text({"en": f}), short=Text({"en": f}), definition=Text({"en": f}))
               for i, f in enumerate(forms)]
    text = "".join(pieces)
    index = TermIndex.build(entries, lang, "en")
    oracle = _one_form_at_a_time(entries, lang)
    assert ([(m.span(), index.entry(m).id) for m in index.regex.finditer(text)]
            == [(m.span(), index.entry(m).id) for m in oracle.finditer(text)])


@pytest.mark.parametrize("lang", ["zh", "vi"])
def test_metric_page_tooltips_are_in_the_page_language(atlas, lang):
    ctx = _ctx(atlas, lang)
    res = next(r for r in ctx.edition.metrics if r.item.path == EXEMPLAR)
    md = render_metric(ctx, ctx.edition.trainer(res.metric.trainer), res)
    titles = re.findall(r'\]\(([^ )]+) "([^"]+)"\)\{ \.atlas-term \}', md)
    assert titles, "no glossary term linked"
    shorts = {it.model.short.root[lang] for it in atlas.sources.glossary}
    english = {it.model.short.root["en"] for it in atlas.sources.glossary}
    assert all(title in shorts and title not in english for _, title in titles)
    assert ("../../glossary/importance_ratio.md", _entry(atlas, "importance_ratio").short.root[lang]) in titles


# --- atlas check: planted mistakes -------------------------------------------------------------------------------

@pytest.fixture
def root(mini_root: Path) -> Path:
    shutil.copytree(ROOT / "glossary", mini_root / "glossary")
    return mini_root


def _edit(root: Path, rel: str, old: str, new: str) -> int:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"test setup: {old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


def _check(capsys, root: Path) -> list[re.Match[str]]:
    code = main(["--root", str(root), "check", "--no-snippets"])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert code == (1 if lines else 0)
    return [LINE.match(ln) for ln in lines]


def test_real_sources_pass(capsys, root):
    assert _check(capsys, root) == []


def test_every_real_text_passes_the_term_bases(capsys):
    """All metrics and entries, not only the exemplar: the many correct 'cắt cụt' (truncation) and 'phép cắt'
    (clipping) must not trip the terms that catch the ambiguous wording."""
    assert _check(capsys, ROOT) == []


GLOSS = "glossary/importance_ratio.yaml"
PLANTED = {
    # name -> (file, old, new, field, message)
    "term_differs_from_term_base": (GLOSS, "zh: 重要性比率\n", "zh: 重要度比率\n", "term.zh",
                                    r"'重要度比率' differs from the term base's preferred '重要性比率'"),
    "synonym_in_a_chinese_metric": (EXEMPLAR, "zh: 被下界裁剪约束的词元比例", "zh: 被下界裁剪约束的令牌比例",
                                    "title.zh",
                                    r"inconsistent term '令牌' for token .*write '词元'"),
    "synonym_in_vietnamese": (EXEMPLAR, "lợi thế âm mà tỷ số lấy mẫu quan trọng", "lợi thế âm mà tỷ lệ quan trọng",
                              "summary.vi", r"inconsistent term 'tỷ lệ quan trọng' for importance_ratio"),
    "synonym_in_the_glossary": (GLOSS, "或生成领先于优化时", "或生成领先于优化且使用令牌时", "definition.zh",
                                r"inconsistent term '令牌'"),
    "forbidden_term_in_the_glossary": (GLOSS, "与正在更新的策略略有不同的策略", "与正在更新的政策略有不同的策略",
                                       "definition.zh", r"forbidden term '政策' for policy"),
    "markdown_in_a_tooltip": (GLOSS, "  en: The probability of a sampled token",
                              "  en: The `probability` of a sampled token",
                              "short.en", r"a tooltip is one line of plain text"),
    "unknown_see_also": (GLOSS, "see_also: [clipping, policy]", "see_also: [cliping, policy]", "see_also[0]",
                         r"unknown glossary entry 'cliping' \(did you mean 'clipping'\?\)"),
    "unknown_field": (GLOSS, "\nsee_also:", "\nsee_allso:", "see_allso",
                      r"unknown field 'see_allso' \(did you mean 'see_also'\?\)"),
    # Vietnamese 'cắt' is clipping and 'cắt cụt' truncation; 'cắt bớt' could be either, so the term base forbids it
    "ambiguous_cut_in_a_vietnamese_metric": (
        EXEMPLAR, "bằng 0 trên phần đệm (và", "bằng 0 trên phần đệm, trên completion bị cắt bớt (và",
        "formula.symbols[5].meaning.vi",
        r"^forbidden term 'cắt bớt' for truncation: ambiguous between clipping and truncation \(for a clipped ratio "
        r"or gradient write 'cắt'\); write 'cắt cụt'$"),
    "ambiguous_cut_at_a_sentence_start": (
        "glossary/truncation.yaml", "  vi: Completion bị dừng ở", "  vi: Cắt bớt completion ở", "short.vi",
        r"^forbidden term 'cắt bớt' for truncation: .*; write 'cắt cụt'$"),
    "synonym_of_truncation_in_vietnamese": (
        "glossary/completion.yaml", "kết thúc chuỗi hoặc giới hạn độ dài.", "kết thúc chuỗi hoặc bị cắt ngắn.",
        "short.vi", r"inconsistent term 'cắt ngắn' for truncation \(a synonym\); the term base and glossary write "
                    r"'cắt cụt'"),
}


EXACT = {"term_differs_from_term_base", "synonym_in_a_chinese_metric", "synonym_in_vietnamese",
         "markdown_in_a_tooltip", "unknown_see_also", "unknown_field", "ambiguous_cut_in_a_vietnamese_metric",
         "ambiguous_cut_at_a_sentence_start", "synonym_of_truncation_in_vietnamese"}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_mistake_gives_one_located_error(capsys, root, name):
    rel, old, new, field, message = PLANTED[name]
    line = _edit(root, rel, old, new)
    errors = _check(capsys, root)
    assert len(errors) == 1 and errors[0], errors
    err = errors[0]
    assert (err["path"], err["field"]) == (rel, field)
    assert re.search(message, err["message"]), err["message"]
    # one-line texts are reported on their own line; a block text (`zh: |`) on its key's line, above the change
    assert int(err["line"]) == line + old.startswith("\n") if name in EXACT else int(err["line"]) < line


def test_concept_missing_from_a_term_base(capsys, root):
    _edit(root, "locales/vi/terms.yaml", "temperature: {preferred: nhiệt độ}\n", "")
    [err] = _check(capsys, root)
    assert err["path"] == "glossary/temperature.yaml" and err["field"] == "term.vi"
    assert "missing from locales/vi/terms.yaml" in err["message"]


# --- the built site ----------------------------------------------------------------------------------------------

def test_yaml_syntax_in_a_short_definition_keeps_the_front_matter(root):
    """A tooltip with a colon, a quote, a '#' and a backslash (TeX) still reaches the page as its description and
    leaves no front matter in the body. `atlas check` refuses the quote, so the model is changed directly."""
    atlas = load_atlas(root, run_snippets=False)
    short = 'Ratio: "clipped" # at 1 + \\epsilon'
    tooltip = Text({lang: short for lang in atlas.config.lang_codes})
    entries = tuple(Loaded(it.model.model_copy(update={"short": tooltip}), it.doc) if it.model.id == "clipping"
                    else it for it in atlas.sources.glossary)
    src = dataclasses.replace(atlas.sources, glossary=entries)
    atlas = Atlas(src, editions(src.config, src.trainers, src.metrics, entries), atlas.math)
    latest = atlas.config.versions[0].name
    site = build_site(root, site_dir=root / "site", versions=[latest], langs=["en"], atlas=atlas)
    page = (site / latest / "glossary" / "clipping" / "index.html").read_text(encoding="utf-8")
    description = re.search(r'<meta name="description" content="([^"]*)"', page)
    assert description and html.unescape(description.group(1)) == "Ratio: 'clipped' # at 1 + \\epsilon"
    assert "edit_url:" not in page


def test_every_entry_has_a_page_in_every_language_and_version(built_site, atlas):
    for version in atlas.config.versions:
        for lang in ("", "zh/", "vi/"):
            assert (built_site / version.name / lang / "glossary" / "index.html").is_file()
            for it in atlas.sources.glossary:
                assert (built_site / version.name / lang / "glossary" / it.model.id / "index.html").is_file()


_TERM_LINK = re.compile(r'<a class="atlas-term" href="([^"]+)" title="([^"]+)">')


@pytest.mark.parametrize("lang", ["", "zh/", "vi/"])
def test_term_links_resolve_and_speak_the_page_language(built_site, atlas, lang):
    code = lang.rstrip("/") or "en"
    shorts = {it.model.short.root[code] for it in atlas.sources.glossary}
    pages = list((built_site / "1.16" / lang / "grpo").rglob("index.html"))
    linked = 0
    for page in pages:
        for href, title in _TERM_LINK.findall(page.read_text(encoding="utf-8")):
            target = (page.parent / href / "index.html").resolve()
            assert target.is_file(), (page, href)
            assert target.is_relative_to((built_site / "1.16" / lang / "glossary").resolve()), (page, href)
            assert html.unescape(title) in shorts, (page, title)
            linked += 1
    assert linked > len(pages)


@pytest.mark.browser
@pytest.mark.xdist_group("site")
@pytest.mark.parametrize("lang", ["zh", "vi"])
def test_hovering_a_term_shows_its_definition_in_the_page_language(page, site_url, atlas, lang):  # noqa: F811
    want = _entry(atlas, "importance_ratio").short.root[lang]
    page.goto(f"{site_url}/1.16/{lang}/grpo/clip_ratio/low_mean/")
    link = page.locator('a.atlas-term[href$="glossary/importance_ratio/"]').first
    link.scroll_into_view_if_needed()
    link.hover()
    tip = page.locator(".md-tooltip2").filter(has_text=want[:12])
    tip.first.wait_for(state="visible", timeout=5000)
    text = tip.first.inner_text()
    assert want in text and _entry(atlas, "importance_ratio").short.root["en"] not in text


