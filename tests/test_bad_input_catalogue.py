"""The catalogue of bad source input: every kind gets exactly one `path:line: field: message` line, the same from
`atlas check` and from `atlas build`, exit code 1, no traceback, and the build writes nothing; several at once all
come out in one run, sorted.

Each case breaks a throwaway copy of the exemplar (or its trainer file, or the configuration) in one way and says
which file, line and field the line must name and what the message must say. Edits find their place by structure
(`^title:`, the snippet's `def`), not by prose, so that the exemplar's wording can change."""

from __future__ import annotations

import re
import shutil
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from generator.cli import main

from .conftest import EXEMPLAR, copy_sources

LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<field>[^:]+): (?P<message>.+)$")


@dataclass(frozen=True)
class Expect:
    line: int
    field: str
    message: str  # a regex searched in the message
    path: str = EXEMPLAR


def _text(root: Path, rel: str = EXEMPLAR) -> str:
    return (root / rel).read_text(encoding="utf-8")


def _line(root: Path, pattern: str, rel: str = EXEMPLAR) -> int:
    """1-based line where ``pattern`` (multiline regex) first matches."""
    text = _text(root, rel)
    m = re.search(pattern, text, re.M)
    assert m, f"test setup: {pattern!r} not in {rel}"
    return text[: m.start()].count("\n") + 1


def _sub(root: Path, pattern: str, repl: str | Callable[[re.Match[str]], str], nth: int = 0) -> int:
    """Replace the ``nth`` match of ``pattern`` (multiline regex) by ``repl`` (literal text, or a function of the
    match) in the exemplar; return the 1-based line where the match started."""
    text = _text(root)
    matches = list(re.finditer(pattern, text, re.M))
    assert len(matches) > nth, f"test setup: {pattern!r} not in the exemplar"
    m = matches[nth]
    new = repl(m) if callable(repl) else repl
    (root / EXEMPLAR).write_text(text[: m.start()] + new + text[m.end():], encoding="utf-8")
    return text[: m.start()].count("\n") + 1


def _text_line(block: str, lang: str) -> str:
    """Regex of the one-line ``lang`` text of a top-level text ``block`` (title, summary); group 1 is the value."""
    return rf"(?<=^{block}:\n)(?:  \w+: .*\n)*?  {lang}: (.*)$"


def _in_text(root: Path, block: str, lang: str, edit: Callable[[str], str]) -> int:
    """Replace the line ``  <lang>: ...`` of a top-level text ``block`` by ``edit(line)``; return its number."""
    text = _text(root)
    m = re.search(_text_line(block, lang), text, re.M)
    assert m, f"test setup: no one-line {block}.{lang} in the exemplar"
    start = m.start(1) - len(f"  {lang}: ")
    (root / EXEMPLAR).write_text(text[:start] + edit(text[start:m.end(1)]) + text[m.end(1):], encoding="utf-8")
    return text[:start].count("\n") + 1


def _whole(root: Path, raw: bytes) -> None:
    (root / EXEMPLAR).write_bytes(raw)


def _releases(root: Path) -> list[str]:
    return [str(r) for r in yaml.safe_load((root / "atlas.yml").read_text(encoding="utf-8"))["trl_releases"]]


def _snippet(root: Path, *body: str) -> Expect:
    """Lines put first in the body of the page's snippet function; the error names `snippet.code`."""
    _sub(root, r"^    def \w+\(.*\):[ ]*$", lambda m: m.group(0) + "".join(f"\n        {b}" for b in body))
    return Expect(_line(root, r"^  code:"), "snippet.code", "")


def _with(expect: Expect, message: str) -> Expect:
    return Expect(expect.line, expect.field, message, expect.path)


# --- YAML and the file itself --------------------------------------------------------------------------------------

def yaml_syntax_error(root, _):
    line = _sub(root, r"^trainer: (\w+)$", lambda m: f"trainer: [{m.group(1)}")
    return Expect(line + 1, "yaml", r"^syntax error: ")


def tab_indentation(root, _):
    line = _in_text(root, "title", "en", lambda t: "\t" + t.lstrip())
    return Expect(line, "yaml", r"tabs are not allowed in YAML indentation")


def duplicate_key(root, _):
    line = _sub(root, r"^category: .*$", lambda m: m.group(0) + "\ncategory: loss")
    return Expect(line + 1, "category", rf"^duplicate key 'category' \(first defined on line {line}\)$")


def not_a_mapping(root, _):
    _whole(root, b"- key: a\n- key: b\n")
    return Expect(1, "document", r"^the document must be a mapping of fields, not a list$")


def empty_file(root, _):
    _whole(root, b"")
    return Expect(1, "file", r"^the file is empty$")


def only_comments(root, _):
    _whole(root, b"# yaml-language-server: $schema=../../schema.json\n# nothing else\n")
    return Expect(1, "file", r"^the file holds no fields")


def not_utf8(root, _):
    line = _line(root, r"^trainer:")
    _whole(root, re.sub(rb"(?m)^trainer: \w+", b"trainer: gr\xe9po", (root / EXEMPLAR).read_bytes(), count=1))
    return Expect(line, "file", r"^not valid UTF-8 \(byte 0xe9\)$")


def not_nfc(root, _):
    line = _in_text(root, "title", "vi", lambda t: t + " " + unicodedata.normalize("NFD", "ếé"))
    return Expect(line, "title.vi", r"not in Unicode NFC form")


def control_character(root, _):
    line = _sub(root, r"^order: .*$", lambda m: m.group(0) + "\x00")
    return Expect(line, "yaml", r"^control character U\+0000 is not allowed$")


def bidi_override(root, _):
    line = _in_text(root, "title", "en", lambda t: t + " \u202e")
    return Expect(line, "title.en", r"bidirectional control character U\+202E")


def python_object_tag(root, _):
    marker = root / "EXECUTED"
    line = _sub(root, r"^category: .*$", f"category: !!python/object/apply:os.system ['touch {marker}']")
    return Expect(line, "category", r"YAML tag 'tag:yaml\.org,2002:python/object/apply:os\.system' is not allowed")


def alias_bomb(root, _):
    levels = ["a: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
        f"{'b' * i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    line = _sub(root, r"^order: .*$", lambda m: m.group(0) + "\n" + "\n".join(levels))
    return Expect(line + 2, "b[0]", r"^YAML anchors and aliases are not allowed in sources$")


def core_tag_on_wrong_value(root, _):
    line = _sub(root, r"^order: .*$", "order: !!int many")
    return Expect(line, "order", r"^'many' is not a valid int$")


def nested_too_deeply(root, _):
    _sub(root, r"^order: .*$", "order: " + "[" * 5000 + "]" * 5000)
    return Expect(1, "yaml", r"^the document is nested too deeply$")


def dangling_symlink(root, _):
    (root / "metrics/grpo/broken.yaml").symlink_to(root / "metrics/grpo/nowhere.yaml")
    return Expect(1, "file", r"^cannot be read: No such file or directory$", "metrics/grpo/broken.yaml")


# --- the schema ----------------------------------------------------------------------------------------------------

def unknown_field(root, _):
    line = _sub(root, r"^order: .*$", lambda m: m.group(0) + "\ncolour: red")
    return Expect(line + 1, "colour", r"^unknown field 'colour'$")


def misspelled_field(root, _):
    line = _sub(root, r"^healthy:", "helthy:")
    return Expect(line, "helthy", r"^unknown field 'helthy' \(did you mean 'healthy'\?\)$")


def misspelled_nested_field(root, _):
    line = _sub(root, r"^  trend:", "  trnd:")
    return Expect(line, "healthy.trnd", r"^unknown field 'trnd' \(did you mean 'trend'\?\)$")


def wrong_type_number(root, _):
    line = _sub(root, r"^order: .*$", "order: many")
    return Expect(line, "order", r"^input should be a valid integer")


def wrong_type_text(root, _):
    line = _sub(root, r"^title:\n(?:  .*\n)+", "title: Share of tokens\n")
    return Expect(line, "title", r"^input should be a valid dictionary")


def wrong_type_translation(root, _):
    line = _in_text(root, "title", "en", lambda t: "  en: 5")
    return Expect(line, "title.en", r"^input should be a valid string$")


def wrong_type_in_union(root, _):
    line = _sub(root, r"^    expected: .*$", "    expected: many")
    return Expect(line, "snippet.example.expected", r"^input should be a valid number or a valid list$")


def misspelled_choice(root, _):
    line = _sub(root, r"^  trend: .*$", "  trend: rizing")
    return Expect(line, "healthy.trend", r"^input should be 'rising', .* \(did you mean 'rising'\?\)$")


def missing_required_field(root, _):
    _sub(root, r"^category: .*\n", "")
    return Expect(_line(root, r"^key:"), "category", r"^required field is missing$")


def missing_translation(root, _):
    _in_text(root, "title", "vi", lambda t: "")  # leaves an empty line: the translation is gone
    return Expect(_line(root, r"^title:"), "title.vi", r"^missing vi translation$")


def unknown_language(root, _):
    line = _in_text(root, "title", "vi", lambda t: t + "\n  fr: Part des jetons")
    return Expect(line + 1, "title.fr", r"^unknown language 'fr'$")


# --- text that would put HTML or script on a page ------------------------------------------------------------------

def script_tag(root, _):
    line = _in_text(root, "title", "en", lambda t: t + " <script>alert(1)</script>")
    return Expect(line, "title.en", r"^HTML is not allowed in text \(found '<script>'\)$")


def img_onerror(root, _):
    line = _in_text(root, "summary", "en", lambda t: t + " <img src=x onerror=alert(1)>")
    return Expect(line, "summary.en", r"^HTML is not allowed in text \(found '<img")


def javascript_link(root, _):
    line = _in_text(root, "summary", "zh", lambda t: t + " [详情](javascript:alert(1))")
    return Expect(line, "summary.zh", r"^'javascript:' URLs are not allowed$")


def raw_markdown_html(root, _):
    line = _in_text(root, "title", "vi", lambda t: t + " <details>x</details>")
    return Expect(line, "title.vi", r"^HTML is not allowed in text \(found '<details>'\)$")


def markdown_attribute_list(root, _):
    line = _in_text(root, "summary", "vi", lambda t: "  vi: '**x**{: onclick=\"alert(1)\" }'")
    return Expect(line, "summary.vi", r"^Markdown attribute lists are not allowed")


def html_in_plain_field(root, _):
    line = _sub(root, r"^  - title: .*$", lambda m: m.group(0) + " <b>x</b>")
    return Expect(line, "sources[0].title", r"^HTML is not allowed \(found '<b>'\)$")


def script_url_field(root, _):
    line = _sub(root, r"^  - title: .*$", lambda m: m.group(0) + '\n    url: "javascript:alert(1)"')
    return Expect(line + 1, "sources[0].url", r"^value error, must be an http\(s\) URL$")


def backtick_in_code_field(root, _):
    line = _sub(root, r"^    - name: .*$", lambda m: m.group(0) + "`")
    return Expect(line, "logged_when.config[0].name", r"^a backtick is not allowed here")


def forbidden_term(root, _):
    line = _in_text(root, "title", "zh", lambda t: t + "（政策）")
    return Expect(line, "title.zh", r"^forbidden term '政策' for policy")


def forbidden_term_capitalised(root, _):
    # the term base lists the lower-case form; a sentence-initial capital is still found
    line = _in_text(root, "title", "vi", lambda t: t.replace("vi: ", "vi: Phần sinh, ", 1))
    return Expect(line, "title.vi", r"^forbidden term 'phần sinh' for completion")


def decimal_comma(root, _):
    line = _in_text(root, "title", "vi", lambda t: t + " (0,05)")
    return Expect(line, "title.vi", r"^number '0,05' uses a decimal comma; this language writes '0\.05'$")


def numbers_parted_by_semicolons(root, _):
    line = _in_text(root, "summary", "vi", lambda t: t + " Ví dụ nanmean(0.5; 1.0).")
    return Expect(line, "summary.vi", r"^'\(0\.5; 1\.0\)' parts numbers with semicolons")


# --- formulas -------------------------------------------------------------------------------------------------------

def invalid_latex(root, _):
    _sub(root, r"(?<=^formula:\n  tex: \|\n)    .*$", lambda m: m.group(0) + r" \frac{1}{")
    return Expect(_line(root, r"^formula:") + 1, "formula.tex", r"^invalid LaTeX: ")


def symbol_not_in_formula(root, _):
    line = _sub(root, r"^    - tex: .*$", r"    - tex: \zeta_{q}")
    return Expect(line, "formula.symbols[0].tex", r"^symbol '\\zeta_\{q\}' does not occur in the formula$")


def misspelled_symbol(root, _):
    text = _text(root)
    m = next(m for m in re.finditer(r"^    - tex: (.*_\{[^{}]*\w\})$", text, re.M))
    index = len(re.findall(r"^    - tex: ", text[: m.start()], re.M))
    typo = m.group(1)[:-2] + ("q" if m.group(1)[-2] != "q" else "r") + "}"
    line = _sub(root, re.escape(m.group(0)), "    - tex: " + typo)
    return Expect(line, f"formula.symbols[{index}].tex",
                  rf"^symbol '{re.escape(typo)}' does not occur in the formula "
                  rf"\(did you mean '{re.escape(m.group(1))}'\?\)$")


# --- snippets -------------------------------------------------------------------------------------------------------

def snippet_syntax_error(root, _):
    return _with(_snippet(root, "values = ["), r"^syntax error: '\[' was never closed \(snippet line \d+\)$")


def snippet_raises(root, _):
    return _with(_snippet(root, "raise ValueError('boom')"), r"^raised ValueError: boom \(snippet line \d+\)$")


def snippet_never_returns(root, monkeypatch):
    import generator.check.snippet_runs as snippets

    monkeypatch.setattr(snippets, "TIMEOUT_S", 1.0)
    return _with(_snippet(root, "while True:", "    pass"), r"^did not return within 1 s$")


def snippet_returns_several_values(root, _):
    return _with(_snippet(root, "import torch", "return torch.tensor([0.25, 0.75])"),
                 r"^returned 2 values \[0\.25, 0\.75\], expected one number$")


def snippet_returns_a_string(root, _):
    return _with(_snippet(root, "return '0.6'"), r"^returned a str '0\.6', expected a number$")


def snippet_returns_complex(root, _):
    return _with(_snippet(root, "return 0.6 + 0.1j"),
                 r"^returned a complex number \(0\.6\+0\.1j\), expected a real number$")


def snippet_ends_its_process(root, _):
    return _with(_snippet(root, "import os", "os._exit(0)"), r"^ended the snippet runner \(exit code 0\)")


def snippet_function_missing(root, _):
    line = _sub(root, r"^  function: .*$", lambda m: m.group(0) + "_v2")
    return Expect(line, "snippet.function", r"^the code defines no function '\w+_v2'$")


def wrong_expected_output(root, _):
    def bump(m: re.Match[str]) -> str:
        return f"    expected: {float(m.group(1)) + 1:g}"

    line = _sub(root, r"^    expected: ([-+.\deE]+)$", bump)
    new = re.search(r"^    expected: (.*)$", _text(root), re.M).group(1)
    return Expect(line, "snippet.example.expected", rf"^returned [-.\d]+, expected {re.escape(new)} \(atol ")


# --- across files ---------------------------------------------------------------------------------------------------

def duplicate_metric(root, _):
    copy = str(Path(EXEMPLAR).with_name("copy.yaml"))
    shutil.copy2(root / EXEMPLAR, root / copy)
    key = re.search(r"^key: (.*)$", _text(root), re.M).group(1)
    return Expect(_line(root, r"^key:", copy), "key",
                  rf"^duplicate metric 'grpo/{re.escape(key)}' \(also in {EXEMPLAR}:", copy)


def key_in_wrong_file(root, _):
    line = _sub(root, r"^key: .*$", lambda m: m.group(0) + "_vv")
    return Expect(line, "key", r"^the file of key '.*_vv' must be metrics/grpo/.*_vv\.yaml$")


def unknown_trainer(root, _):
    line = _sub(root, r"^trainer: .*$", "trainer: grpp")
    return Expect(line, "trainer", r"^unknown trainer 'grpp' \(did you mean 'grpo'\?\)$")


def unknown_category(root, _):
    line = _sub(root, r"^category: (\w)\w(\w+)$", lambda m: f"category: {m.group(1)}{m.group(2)}")
    return Expect(line, "category", r"^unknown category '\w+' \(did you mean '\w+'\?\)$")


def dangling_reference(root, _):
    key = re.search(r"^key: (.*)$", _text(root), re.M).group(1)
    typo = f"grpo/{key[:-2]}{key[-1]}"
    line = _sub(root, r"^related: .*$", f"related: [{typo}]")
    return Expect(line, "related[0]",
                  rf"^unknown metric '{re.escape(typo)}' \(did you mean 'grpo/{re.escape(key)}'\?\)$")


def dangling_reference_in_variant(root, _):
    line = _sub(root, r"^(  - from: .*\n    to: .*\n)", lambda m: m.group(1) + "    related: [grpo/kl]\n", nth=1)
    return Expect(line + 2, "variants[1].related[0]", r"^unknown metric 'grpo/kl'$")


# --- text that no page shows ----------------------------------------------------------------------------------------

def dead_text_in_a_range_no_line_shows(root, _):
    """The exemplar's first range ends before the oldest line's release: *Changed in* shows its meaning, formula...
    in full, but a one-line summary would be shown nowhere."""
    line = _sub(root, r"^(  - from: .*\n    to: .*\n)",
                lambda m: m.group(1) + "    summary: {en: Old., zh: 旧。, vi: Cũ.}\n", nth=0)
    return Expect(line + 2, "variants[0].summary",
                  r"^shown on no page or cheat-sheet: no line describes TRL \S+ to \S+, .*; remove it$")


def reason_of_a_checked_metric(root, _):
    line = _sub(root, r"^conformance:\n  checked: true\n",
                "conformance:\n  checked: true\n  reason: {en: Not run., zh: 未运行。, vi: Chưa chạy.}\n")
    return Expect(line + 2, "conformance.reason", r"^a reason is shown only when `checked` is false; remove it$")


# --- trainer files and the configuration ---------------------------------------------------------------------------

TRAINER = "metrics/grpo/trainer.yaml"


def _trainer(root: Path, pattern: str, repl: str) -> int:
    """Replace the first match of ``pattern`` in the trainer file; return the line it started on."""
    text = _text(root, TRAINER)
    m = re.search(pattern, text, re.M)
    assert m, f"test setup: {pattern!r} not in {TRAINER}"
    (root / TRAINER).write_text(text[: m.start()] + repl + text[m.end():], encoding="utf-8")
    return text[: m.start()].count("\n") + 1


def trainer_misspelled_field(root, _):
    line = _trainer(root, r"^intro:", "intr:")
    return Expect(line, "intr", r"^unknown field 'intr' \(did you mean 'intro'\?\)$", TRAINER)


def trainer_id_not_its_folder(root, _):
    line = _trainer(root, r"^id: grpo$", "id: grpp")
    return Expect(line, "id", r"^the trainer of metrics/grpo/ must have id 'grpo'$", TRAINER)


def trainer_classes_leave_a_gap(root, _):
    text = _text(root, TRAINER)
    m = re.search(r"^(- from: \S+\n)  to: null\n((?:  .*\n)+)", text, re.M)
    assert m, "test setup: no open class in the trainer file"
    second = f"- from: 0.21.0\n  to: null\n{m.group(2)}"
    (root / TRAINER).write_text(text[: m.start()] + m.group(1) + "  to: 0.20.0\n" + m.group(2) + second
                                + text[m.end():], encoding="utf-8")
    line = text[: m.end()].count("\n") + 1
    return Expect(line, "classes[1].from", r"^gap: releases 0\.20\.0 to 0\.21\.0 are in no class$", TRAINER)


def crucial_default_not_a_release(root, _):
    line = _trainer(root, r"^  - from: 0\.19\.0$", "  - from: 0.19.7")
    return Expect(line, r"crucial[0].defaults[1].from", r"^'0\.19\.7' is not a TRL release \(did you mean ", TRAINER)


def explainer_of_an_unknown_metric(root, _):
    key = re.search(r"^key: (.*)$", _text(root), re.M).group(1)
    rel = "metrics/grpo/explainers/clipping.yaml"
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(
        "id: clipping\ntrainer: grpo\ntitle: {en: Clipping, zh: 裁剪, vi: Phép cắt}\n"
        "summary: {en: What is clipped., zh: 裁剪了什么。, vi: Cái gì bị cắt.}\n"
        "body: {en: Both sides., zh: 两侧。, vi: Hai phía.}\n"
        f"metrics: [grpo/{key}, grpo/{key}x]\nsources: [{{title: TRL, url: 'https://github.com/huggingface/trl'}}]\n",
        encoding="utf-8")
    k = re.escape(key)
    return Expect(6, "metrics[1]", rf"^unknown metric 'grpo/{k}x' \(did you mean 'grpo/{k}'\?\)$", rel)


def two_default_languages(root, _):
    text = _text(root, "atlas.yml")
    (root / "atlas.yml").write_text(text.replace("status: complete}", "status: complete, default: true}", 1),
                                    encoding="utf-8")
    return Expect(_line(root, r"^languages:", "atlas.yml"), "languages",
                  r"^exactly one language must be the default \(found 2\)$", "atlas.yml")


# --- TRL release ranges ---------------------------------------------------------------------------------------------

def since_not_a_release(root, _):
    since = re.search(r"^since: (\S+)$", _text(root), re.M).group(1)
    fake = since.rsplit(".", 1)[0] + ".97"
    line = _sub(root, r"^since: .*$", f"since: {fake}")
    return Expect(line, "since", rf"^'{re.escape(fake)}' is not a TRL release \(did you mean '{re.escape(since)}'\?\)$")


def _second_variant(root: Path) -> tuple[str, list[str]]:
    return re.findall(r"^  - from: (\S+)$", _text(root), re.M)[1], _releases(root)


def variant_ranges_overlap(root, _):
    start, releases = _second_variant(root)
    earlier = releases[releases.index(start) - 1]
    line = _sub(root, r"^  - from: .*$", f"  - from: {earlier}", nth=1)
    return Expect(line, "variants[1].from", rf"^overlap: range starting {re.escape(earlier)} overlaps the previous one")


def variant_ranges_gap(root, _):
    start, releases = _second_variant(root)
    later = releases[releases.index(start) + 1]
    line = _sub(root, r"^  - from: .*$", f"  - from: {later}", nth=1)
    return Expect(line, "variants[1].from",
                  rf"^gap: releases {re.escape(start)} to {re.escape(later)} are in no variant$")


def variant_not_a_release(root, _):
    start, _releases_ = _second_variant(root)
    fake = start.rsplit(".", 1)[0] + ".97"
    line = _sub(root, r"^  - from: .*$", f"  - from: {fake}", nth=1)
    return Expect(line, "variants[1].from", rf"^'{re.escape(fake)}' is not a TRL release \(did you mean ")


# --- configuration, locales and translation stamps -------------------------------------------------------------------

def _append(root: Path, rel: str, text: str) -> int:
    """Append ``text`` (one line) to ``rel``; return its line number."""
    old = _text(root, rel)
    old += "" if old.endswith("\n") else "\n"
    (root / rel).write_text(old + text + "\n", encoding="utf-8")
    return old.count("\n") + 1


def config_misspelled_field(root, _):
    line = _append(root, "atlas.yml", "edit_bse: https://example.org/")
    return Expect(line, "edit_bse", r"^unknown field 'edit_bse' \(did you mean 'edit_base'\?\)$", path="atlas.yml")


def ui_not_a_mapping(root, _):
    (root / "locales/vi/ui.yaml").write_text("- site_name\n- home_title\n", encoding="utf-8")
    return Expect(1, "document", r"^the document must be a mapping of fields, not a list$", path="locales/vi/ui.yaml")


def ui_misspelled_string(root, _):
    line = _append(root, "locales/zh/ui.yaml", "glosary_title: 词汇")
    return Expect(line, "glosary_title", r"^unknown UI string 'glosary_title' \(did you mean 'glossary_title'\?\)$",
                  path="locales/zh/ui.yaml")


def ui_string_not_text(root, _):
    line = _append(root, "locales/en/ui.yaml", "zz_extra: {nested: mapping}")
    return Expect(line, "zz_extra", r"^a UI string must be text$", path="locales/en/ui.yaml")


def term_base_misspelled_field(root, _):
    line = _append(root, "locales/vi/terms.yaml", "zz_concept: {prefered: x}")
    return Expect(line, "zz_concept.prefered", r"^unknown field 'prefered' \(did you mean 'preferred'\?\)$",
                  path="locales/vi/terms.yaml")


def stamp_not_two_fingerprints(root, _):
    line = _append(root, "locales/zh/stamps.yaml", "zz/not-a-file.yaml: {title: 12ab}")
    return Expect(line, "zz/not-a-file.yaml[title]", r"^a stamp is two fingerprints of 8 hex digits",
                  path="locales/zh/stamps.yaml")


# --- the rules `atlas doctor` evaluates (healthy.red_flags, troubleshooting groups) ---------------------------------

def _first_flag(root: Path, *fields: str) -> int:
    """Put ``fields`` (YAML lines) into the exemplar's first red flag, right under its `op`; return their line."""
    return _sub(root, r"^    - op: .*$", lambda m: m.group(0) + "".join(f"\n      {f}" for f in fields)) + 1


def rule_condition_on_an_unknown_key(root, _):
    line = _first_flag(root, "when:", "  - {key: clip_ratio/low_mien, op: '>', value: 0}")
    return Expect(line + 1, "healthy.red_flags[0].when[0].key",
                  r"^unknown key 'clip_ratio/low_mien' of this trainer \(did you mean 'clip_ratio/low_mean'\?\)$")


def rule_condition_of_two_kinds(root, _):
    line = _first_flag(root, "when:", "  - {setting: beta, logged: clip_ratio/low_mean}")
    return Expect(line + 1, "healthy.red_flags[0].when[0]",
                  r"^give exactly one of `setting`, `logged` or `key` \(this one gives setting, logged\)$")


def rule_ordered_comparison_of_a_string(root, _):
    line = _first_flag(root, "when:", "  - {setting: loss_type, op: '>', value: dapo}")
    return Expect(line + 1, "healthy.red_flags[0].when[0].value", r"^op '>' compares numbers, not 'dapo'$")


def rule_trend_with_a_duration(root, _):
    line = _sub(root, r"^    - op: rising$", "    - op: rising\n      for_logs: 5") + 1
    return Expect(line, "healthy.red_flags[1].for_logs", r"^a trend is measured over `window`, not `for_logs`$")


def rule_points_to_a_missing_troubleshooting_item(root, _):
    line = _sub(root, r"^      troubleshooting: 2$", "      troubleshooting: 7")
    return Expect(line, "healthy.red_flags[0].troubleshooting",
                  r"^item 7 does not exist: the page of releases .* has 2 troubleshooting items$")


def unknown_symptom_group(root, _):
    line = _sub(root, r"^  - group: \w+$", "  - group: clippin")
    return Expect(line, "troubleshooting[0].group", r"^unknown symptom group 'clippin' \(did you mean 'clipping'\?\)$")


CASES: dict[str, Callable[[Path, pytest.MonkeyPatch], Expect]] = {
    f.__name__: f for f in (
        yaml_syntax_error, tab_indentation, duplicate_key, not_a_mapping, empty_file, only_comments, not_utf8,
        not_nfc, control_character, bidi_override, python_object_tag, alias_bomb, core_tag_on_wrong_value,
        nested_too_deeply, dangling_symlink,
        unknown_field, misspelled_field, misspelled_nested_field, wrong_type_number, wrong_type_text,
        wrong_type_translation, wrong_type_in_union, misspelled_choice, missing_required_field, missing_translation,
        unknown_language,
        script_tag, img_onerror, javascript_link, raw_markdown_html, markdown_attribute_list, html_in_plain_field,
        script_url_field, backtick_in_code_field, forbidden_term, forbidden_term_capitalised, decimal_comma,
        numbers_parted_by_semicolons,
        invalid_latex, symbol_not_in_formula, misspelled_symbol,
        snippet_syntax_error, snippet_raises, snippet_never_returns, snippet_returns_several_values,
        snippet_returns_a_string, snippet_returns_complex, snippet_ends_its_process, snippet_function_missing,
        wrong_expected_output,
        duplicate_metric, key_in_wrong_file, unknown_trainer, unknown_category, dangling_reference,
        dangling_reference_in_variant,
        dead_text_in_a_range_no_line_shows, reason_of_a_checked_metric,
        trainer_misspelled_field, trainer_id_not_its_folder, trainer_classes_leave_a_gap,
        crucial_default_not_a_release, explainer_of_an_unknown_metric, two_default_languages,
        since_not_a_release, variant_ranges_overlap, variant_ranges_gap, variant_not_a_release,
        config_misspelled_field, ui_not_a_mapping, ui_misspelled_string, ui_string_not_text,
        term_base_misspelled_field, stamp_not_two_fingerprints,
        rule_condition_on_an_unknown_key, rule_condition_of_two_kinds, rule_ordered_comparison_of_a_string,
        rule_trend_with_a_duration, rule_points_to_a_missing_troubleshooting_item, unknown_symptom_group,
    )
}


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> bytes:
    """KaTeX HTML and snippet results of the intact exemplar, so that each case only pays for what it broke."""
    from generator.pipeline import load_atlas

    root = copy_sources(tmp_path_factory.mktemp("warm") / "src", [EXEMPLAR])
    path = root / EXEMPLAR
    path.write_text(re.sub(r"(?m)^related: .*$", "related: []", path.read_text(encoding="utf-8")), encoding="utf-8")
    load_atlas(root)  # raises (and so fails every case, saying why) if the exemplar itself is broken
    return (root / ".cache/atlas/results.json").read_bytes()


@pytest.fixture
def root(mini_root: Path, warm_cache: bytes) -> Path:
    (mini_root / ".cache/atlas").mkdir(parents=True)
    (mini_root / ".cache/atlas/results.json").write_bytes(warm_cache)
    return mini_root


def _run(capsys, root: Path, *args: str) -> tuple[int, list[str], str]:
    code = main(["--root", str(root), *args])
    captured = capsys.readouterr()
    return code, [ln for ln in captured.out.splitlines() if ln.strip()], captured.err


def test_the_catalogue_is_big_enough():
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_gets_one_line_from_check_and_build(case, root, capsys, monkeypatch):
    expect = CASES[case](root, monkeypatch)
    code, lines, err = _run(capsys, root, "check")
    assert code == 1, lines
    assert len(lines) == 1, lines
    assert "Traceback" not in err
    m = LINE.match(lines[0])
    assert m, f"not a `path:line: field: message` line: {lines[0]!r}"
    assert (m["path"], int(m["line"]), m["field"]) == (expect.path, expect.line, expect.field), lines[0]
    assert re.search(expect.message, m["message"]), lines[0]

    code, build_lines, err = _run(capsys, root, "build")
    assert (code, build_lines) == (1, lines)
    assert "Traceback" not in err
    assert not (root / "site").exists()
    assert not any((root / "build").iterdir()) if (root / "build").exists() else True
    assert not (root / "EXECUTED").exists()


# --- several at once -------------------------------------------------------------------------------------------------

def test_every_error_comes_out_in_one_run_sorted(root, capsys, monkeypatch):
    """Errors of every stage (schema, text, LaTeX, a wrong worked example) in one run, sorted by line."""
    wanted = [CASES[name](root, monkeypatch) for name in ("wrong_expected_output", "script_tag", "invalid_latex")]
    code, lines, _ = _run(capsys, root, "check")
    assert code == 1
    found = [LINE.match(ln) for ln in lines]
    assert all(found), lines
    assert [(m["field"], int(m["line"])) for m in found] == sorted(
        [(e.field, e.line) for e in wanted], key=lambda fl: fl[1])
    assert [int(m["line"]) for m in found] == sorted(int(m["line"]) for m in found)


def test_a_file_that_fails_its_schema_still_gets_its_text_errors(root, capsys, monkeypatch):
    first, second = CASES["misspelled_field"](root, monkeypatch), CASES["missing_translation"](root, monkeypatch)
    code, lines, _ = _run(capsys, root, "check")
    assert code == 1
    assert {LINE.match(ln)["field"] for ln in lines} == {first.field, second.field}


def test_nan_in_example_inputs_reaches_the_snippet(root, capsys):
    """YAML `.nan` (a reward function that returned None, a masked slot) survives the trip to the snippet runner."""
    _sub(root, r"^(\s+- \[\[[-\d.]+, [-\d.]+, )[-\d.]+\]", lambda m: m.group(1) + ".nan]")
    assert _run(capsys, root, "check")[:2] == (0, [])


def test_the_cache_never_hides_a_changed_example(root, capsys, monkeypatch):
    """A snippet that passed is cached by content; editing its example or its formula is a miss, checked again."""
    assert _run(capsys, root, "check")[:2] == (0, [])
    expected = CASES["wrong_expected_output"](root, monkeypatch)
    code, lines, _ = _run(capsys, root, "check")
    assert code == 1 and [LINE.match(ln)["field"] for ln in lines] == [expected.field]
    latex = CASES["invalid_latex"](root, monkeypatch)
    code, lines, _ = _run(capsys, root, "check")
    assert sorted(LINE.match(ln)["field"] for ln in lines) == sorted([expected.field, latex.field])


def test_ranges_that_tile_pass(root, capsys):
    """The range checks refuse only what is wrong: variants that meet end to end are fine."""
    start, releases = _second_variant(root)
    assert start in releases
    assert _run(capsys, root, "check")[:2] == (0, [])
