"""Translation status: per-field staleness without git history, the stamps workflow, the report (terminal and
site page), localized notices on pages, and a language in progress added with files only."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.cli import main
from generator.errors import SourceErrors
from generator.pipeline import build_site, load_atlas
from generator.read.translations import (
    _load_stamps_yaml,
    _read_dumped,
    _yaml_key,
    dump_stamps,
    field_states,
    fingerprint,
    load_stamps,
    new_stamps,
    stamps_path,
)
from generator.read.yamlsrc import parse

from .conftest import ROOT, copy_cache, copy_sources, real_atlas
from .shared import once

KL = "metrics/grpo/kl.yaml"
LOW = "metrics/grpo/clip_ratio/low_mean.yaml"
LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<field>[^:]+): (?P<message>.+)$")
FR_UI = {
    "site_name": "Atlas des métriques RL",
    "i18n_missing_title": "Pas encore traduit en {lang}",
    "i18n_missing_text": "Affiché en anglais en attendant une traduction : {fields}. Ajoutez le texte {lang} dans "
                         "[{path}]({edit}).",
    "i18n_line": "ligne {line}",
    "meaning": "Signification",
}


def _doc(text: str):
    doc, errors = parse("metrics/x.yaml", text.encode())
    assert not errors
    return doc


SOURCE = "title:\n  en: Old English\n  zh: 旧\nsummary:\n  en: Same\n  zh: 同\nmeaning:\n  en: Only English\n"


def _states(text: str, stamps) -> dict[str, str]:
    return {f.name: f.state for f in field_states(_doc(text), "zh", "en", stamps)}


def test_field_states_follow_the_stamps():
    before = _doc(SOURCE)
    stamps = new_stamps([before], "zh", "en", {})
    assert _states(SOURCE, {}) == {"title": "unstamped", "summary": "unstamped", "meaning": "missing"}
    assert _states(SOURCE, stamps) == {"title": "current", "summary": "current", "meaning": "missing"}
    changed = SOURCE.replace("Old English", "New English")
    assert _states(changed, stamps) == {"title": "stale", "summary": "current", "meaning": "missing"}
    # the translator revised the translation after the English changed: no longer stale
    assert _states(changed.replace("旧", "新"), stamps)["title"] == "current"
    # whitespace and Unicode normalisation are not changes
    assert _states(SOURCE.replace("Old English", "Old  English"), stamps)["title"] == "current"
    assert fingerprint("e\u0301") == fingerprint("\u00e9")


def test_stamp_keeps_stale_translations_stale_unless_accepted():
    stamps = new_stamps([_doc(SOURCE)], "zh", "en", {})
    changed = _doc(SOURCE.replace("Old English", "New English"))
    again = new_stamps([changed], "zh", "en", stamps)
    assert again["metrics/x.yaml"]["title"] == stamps["metrics/x.yaml"]["title"]
    assert _states(SOURCE.replace("Old English", "New English"), again)["title"] == "stale"
    accepted = new_stamps([changed], "zh", "en", stamps, accept={("metrics/x.yaml", "title")})
    assert _states(SOURCE.replace("Old English", "New English"), accepted)["title"] == "current"
    assert "meaning" not in accepted["metrics/x.yaml"]  # nothing to stamp where no translation exists


def test_stamps_file_round_trips_and_rejects_bad_entries(tmp_path):
    root = tmp_path
    (root / "locales" / "zh").mkdir(parents=True)
    stamps = {"metrics/grpo/kl.yaml": {"formula.symbols[0].meaning": ("0123abcd", "89ef4567"),
                                       "title": ("a" * 8, "b" * 8)}}
    (root / "locales/zh/stamps.yaml").write_text(dump_stamps(stamps, "zh"), encoding="utf-8")
    assert load_stamps(root, "zh") == stamps
    bad = "metrics/grpo/kl.yaml:\n  title: abc\n  summary: [1]\n"
    (root / "locales/zh/stamps.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(SourceErrors) as exc:
        load_stamps(root, "zh")
    lines = [str(e) for e in exc.value.errors]
    assert [LINE.match(s)["line"] for s in lines] == ["2", "3"], lines
    assert all(s.startswith("locales/zh/stamps.yaml:") and "two fingerprints" in s for s in lines)


def test_committed_stamps_are_read_without_yaml_as_yaml_reads_them():
    for lang in ("zh", "vi"):
        text = stamps_path(ROOT, lang).read_text(encoding="utf-8")
        assert _read_dumped(text, lang) is not None, "the committed file is not as `atlas i18n stamp` writes it"
        assert load_stamps(ROOT, lang) == _load_stamps_yaml(ROOT, lang)


NAMES = st.sampled_from(["title", "summary", "formula.symbols[0].meaning", "yes", "No", "null", "on", "a b", "x:y",
                         '"q"', "a\\b", "[0]", "{k}", "", "é", "#c", "~", "1.5", "- x", "title"])
FILES = st.sampled_from(["metrics/grpo/kl.yaml", "glossary/x.yml", "true.yaml", "a b.yaml", "metrics/x", "y"])
STAMPS = st.dictionaries(FILES, st.dictionaries(NAMES, st.tuples(*[st.from_regex(r"\A[0-9a-f]{8}\Z")] * 2),
                                                max_size=3), max_size=3)


def _outcome(read, root: Path):
    try:
        return read(root, "zh")
    except SourceErrors as exc:
        return [str(e) for e in exc.errors]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STAMPS, st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(["", " ", "\n", ":", "#", '"', "  x: 1",
                                                                         "\t", "- ", "0"])), min_size=1, max_size=3))
def test_edited_stamps_read_without_yaml_are_what_yaml_reads(tmp_path, stamps, edits):
    """Whatever an edited file holds, the line reader either gives what YAML gives or leaves the file to YAML."""
    text = dump_stamps(stamps, "zh")
    for at, piece in edits:
        at %= len(text) + 1
        text = text[:at] + piece + text[at:]
    path = stamps_path(tmp_path, "zh")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    assert _outcome(load_stamps, tmp_path) == _outcome(_load_stamps_yaml, tmp_path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STAMPS)
def test_written_stamps_are_read_without_yaml_unless_a_key_needs_it(tmp_path, stamps):
    path = stamps_path(tmp_path, "zh")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_stamps(stamps, "zh"), encoding="utf-8")
    assert _outcome(load_stamps, tmp_path) == _outcome(_load_stamps_yaml, tmp_path)
    assert (_read_dumped(path.read_text(encoding="utf-8"), "zh") is not None) == (not _needs_yaml(stamps))


def _needs_yaml(stamps) -> bool:
    """Keys the line reader leaves to YAML: a file that is not a plain path or has no fields, a name written without
    quotes that YAML reads as something else (a number, true, null), a quoted name holding a quote or backslash."""
    odd_file = any(not re.fullmatch(r"[\w./-]+\.ya?ml", f) or not names for f, names in stamps.items())
    odd_name = any((n.lower() in ("yes", "no", "null", "on") or not (n[0].isalpha() or n[0] == "_"))
                   if _yaml_key(n) == n else bool(set(n) & set('"\\'))  # written without quotes, or with
                   for names in stamps.values() for n in names)
    return odd_file or odd_name


def test_committed_stamps_cover_every_translation():
    """The sources' translations are all stamped: the status report starts from a clean state."""
    atlas = real_atlas()
    for lang in ("zh", "vi"):
        states = [f.state for it in atlas.translated
                  for f in field_states(it.doc, lang, "en", atlas.stamps[lang])]
        assert len(states) > 2000
        assert states.count("missing") == 0
        # a translation may be stale (never an error), but the shipped stamps record every one
        assert states.count("unstamped") == 0, lang


# -- a temporary checkout: one English text changed, and a French translation begun ------------------------------

@pytest.fixture(scope="module")
def changed_root(tmp_path_factory) -> Path:
    """GRPO's metrics (the changed one among them) with the glossary: every kind of page a translation shows on, at
    half the size of the whole site."""
    root = copy_sources(tmp_path_factory.mktemp("i18n") / "src",
                        [str(p.relative_to(ROOT)) for p in sorted((ROOT / "metrics/grpo").rglob("*.yaml"))
                         if p.name != "trainer.yaml"])
    copy_cache(root)  # the formulas' KaTeX HTML (the sheets too, once the real site is built)
    for extra in ("glossary", "TRANSLATING.md"):
        if not (root / extra).exists():
            (shutil.copytree if (ROOT / extra).is_dir() else shutil.copy2)(ROOT / extra, root / extra)
    kl = root / KL
    text = kl.read_text(encoding="utf-8")
    marker = "  en: |\n    This is the quantity TRL penalises with `beta`"
    assert marker in text
    kl.write_text(text.replace(marker, marker.replace("This is", "Note: this is")), encoding="utf-8")
    # a language in progress: one configuration entry, a partial ui.yaml, one translated text
    cfg = root / "atlas.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace(
        "  - {code: vi, name: Tiếng Việt, status: complete, search_letters: {d: đ}}\n",
        "  - {code: vi, name: Tiếng Việt, status: complete, search_letters: {d: đ}}\n"
        "  - {code: fr, name: Français, status: in_progress, decimal: \",\"}\n"),
        encoding="utf-8")
    (root / "locales/fr").mkdir()
    (root / "locales/fr/ui.yaml").write_text(yaml.safe_dump(FR_UI, allow_unicode=True), encoding="utf-8")
    low = root / LOW
    text = low.read_text(encoding="utf-8")
    vi_title = re.search(r"^title:\n(?:  \w\w: .*\n)*?(  vi: .*\n)", text, re.M).group(1)  # the title's last line
    low.write_text(text.replace(vi_title, vi_title + "  fr: Part des jetons retenus par la borne basse\n"),
                   encoding="utf-8")
    return root


def _run(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, (out.out + out.err).splitlines()


def test_status_reports_exactly_the_changed_field_stale(changed_root, capsys):
    code, lines = _run(capsys, "--root", str(changed_root), "i18n", "status", "--stale")
    assert code == 0
    stale = [LINE.match(s).groupdict() for s in lines if LINE.match(s)]
    assert {(s["path"], s["field"], s["message"]) for s in stale} == {
        (KL, "meaning", "zh translation stale"), (KL, "meaning", "vi translation stale")}
    # the line is that of each translation in the file
    text = (changed_root / KL).read_text(encoding="utf-8").splitlines()
    for s in stale:
        assert text[int(s["line"]) - 1].lstrip().startswith(s["message"][:2] + ":")
    summary = {ln.split()[0]: ln.split() for ln in lines[1:4]}
    assert summary["zh"][1:] == ["complete", summary["zh"][2], "100.0%", "1", "0"]
    assert summary["fr"][1:3] == ["in_progress", f"1/{summary['fr'][2].split('/')[1]}"]


def test_a_missing_text_of_a_language_in_progress_is_not_an_error(changed_root, capsys):
    code, lines = _run(capsys, "--root", str(changed_root), "check", "--no-snippets")
    assert code == 0, lines


def test_a_missing_text_of_a_complete_language_is_an_error(changed_root, tmp_path, capsys):
    root = shutil.copytree(changed_root, tmp_path / "src")
    cfg = root / "atlas.yml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("status: in_progress", "status: complete"), encoding="utf-8")
    code, lines = _run(capsys, "--root", str(root), "check", "--no-snippets")
    assert code == 1
    errors = [LINE.match(s) for s in lines if LINE.match(s)]
    assert errors and all(e["message"] == "missing fr translation" for e in errors if e["field"].endswith(".fr"))
    assert any(e["message"].startswith("missing fr translation of UI string") for e in errors)


@pytest.fixture(scope="module")
def changed_site(changed_root, built_site, tmp_path_factory) -> Path:
    """The newest line of the changed sources, built once for the session (every pytest-xdist worker reads the same
    build); after the real site, whose cache makes every formula and unchanged cheat-sheet a copy."""
    copy_cache(changed_root)
    atlas = load_atlas(changed_root, run_snippets=False)

    def make(folder: Path) -> None:
        build_site(changed_root, site_dir=folder, versions=[atlas.config.latest.name], atlas=atlas)

    return once(tmp_path_factory, "i18n-site", make) / atlas.config.latest.name


def _page(site: Path, rel: str) -> str:
    return (site / rel / "index.html").read_text(encoding="utf-8")


def _notices(page: str, kind: str) -> list[str]:
    return re.findall(rf'<div class="admonition \w+ atlas-i18n-{kind}">(.*?)</div>', page, re.S)


def _section_of(page: str, notice: str) -> str:
    """The id of the h2 heading the notice follows."""
    before = page[:page.index(notice)]
    return re.findall(r'<h2 id="([^"]+)"', before)[-1]


def test_pages_flag_the_stale_section_in_each_language(changed_site):
    for lang, title in (("zh", "此译文可能已过时"), ("vi", "Bản dịch này có thể đã cũ")):
        page = _page(changed_site, f"{lang}/grpo/kl")
        stale = _notices(page, "stale")
        assert len(stale) == 1, lang
        assert title in stale[0] and "meaning" in stale[0]
        assert _section_of(page, stale[0]) == "meaning"
        assert 'href="/1.16/grpo/kl/"' in stale[0]  # the English page, not this language's
        # only that page: another metric in the same language has no notice
        assert not _notices(_page(changed_site, f"{lang}/grpo/clip_ratio/low_mean"), "stale")
    assert not _notices(_page(changed_site, "grpo/kl"), "stale")  # English is the source: never stale


def test_language_in_progress_falls_back_to_english_with_a_localized_notice(changed_site):
    page = _page(changed_site, "fr/grpo/clip_ratio/low_mean")
    assert 'lang="fr"' in page
    assert "Part des jetons retenus par la borne basse" in page  # the one translated text
    missing = _notices(page, "missing")
    assert missing and all("Pas encore traduit en Français" in n for n in missing)
    assert not any("`title`" in n or "<code>title</code>" in n for n in missing)  # title is translated
    assert "Fraction of completion tokens with a negative advantage" in page  # the summary, in English
    # each notice names the field, its line and links to the YAML to fix
    assert any("<code>summary</code> (ligne 12)" in n for n in missing)
    assert all("edit/main/metrics/grpo/clip_ratio/low_mean.yaml" in n for n in missing)
    # a UI string French lacks shows in English; one it has shows in French
    assert "Signification" in page and "How TRL aggregates it" in page
    status = _page(changed_site, "fr/translation-status")
    assert "Français" in status and "in progress" in status


def test_status_page_lists_the_stale_field(changed_site):
    page = _page(changed_site, "translation-status")
    assert page.count(f"{KL}:") == 2  # once under Chinese, once under Vietnamese
    assert "<code>meaning</code>" in page
    assert _page(changed_site, "translating").count("atlas i18n stamp") >= 2
