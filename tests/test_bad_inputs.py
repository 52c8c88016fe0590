"""Bad sources: each gets one clear `path:line: field: message` line from `atlas check` and `atlas build`,
all errors come out in one run, the exit code is 1, and the build writes nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.cli import main

from .conftest import EXEMPLAR

LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?: (?P<field>[^:]+):)? (?P<message>.+)$")


def _edit(root: Path, rel: str, old: str, new: str, count: int = 1) -> int:
    """Replace ``old`` by ``new`` in a source; return the 1-based line of the first change."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"test setup: {old!r} not in {rel}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


def _run(capsys, root: Path, *args: str) -> tuple[int, list[str]]:
    code = main(["--root", str(root), *args])
    out = capsys.readouterr().out
    return code, [ln for ln in out.splitlines() if ln.strip()]


def _line_of(root: Path, rel: str, needle: str) -> int:
    text = (root / rel).read_text(encoding="utf-8")
    return text[: text.index(needle)].count("\n") + 1


def _dup_metric(root: Path) -> None:
    dest = root / "metrics/grpo/clip_ratio/copy.yaml"
    dest.write_text((root / EXEMPLAR).read_text(encoding="utf-8"), encoding="utf-8")


# name -> (mutation, expected file, expected field, message pattern); each mutation makes exactly one error
CASES = {
    "malformed_yaml": (lambda r: _edit(r, EXEMPLAR, "trainer: grpo", "trainer: [grpo"),
                       EXEMPLAR, "yaml", r"syntax error"),
    "unknown_field": (lambda r: _edit(r, EXEMPLAR, "\nhealthy:", "\nhelthy:"),
                      EXEMPLAR, "helthy", r"unknown field 'helthy' \(did you mean 'healthy'\?\)"),
    "missing_translation": (lambda r: _edit(r, EXEMPLAR, "  vi: Tỷ lệ token bị chặn bởi ngưỡng cắt dưới\n", ""),
                            EXEMPLAR, "title.vi", r"missing vi translation"),
    "duplicate_key": (lambda r: _edit(r, EXEMPLAR, "category: clipping\n", "category: clipping\ncategory: loss\n"),
                      EXEMPLAR, "category", r"duplicate key 'category' \(first defined on line \d+\)"),
    "duplicate_metric": (_dup_metric, "metrics/grpo/clip_ratio/copy.yaml", "key",
                         r"duplicate metric 'grpo/clip_ratio/low_mean'"),
    "html_in_translation": (lambda r: _edit(r, EXEMPLAR, "zh: 被下界裁剪约束的词元比例",
                                            "zh: 被下界<b>裁剪</b>约束的词元比例"),
                            EXEMPLAR, "title.zh", r"HTML is not allowed"),
    "invalid_latex": (lambda r: _edit(r, EXEMPLAR, r"\mathrm{low\_mean} = \frac{1}{M}",
                                      r"\mathrm{low\_mean} = \frac{1}{M"),
                      EXEMPLAR, "formula.tex", r"invalid LaTeX"),
    "snippet_raises": (lambda r: _edit(r, EXEMPLAR, "        per_micro_batch = []\n",
                                       "        per_micro_batch = []\n        raise ValueError('boom')\n"),
                       EXEMPLAR, "snippet.code", r"raised ValueError: boom"),
    "wrong_example_output": (lambda r: _edit(r, EXEMPLAR, "    expected: 0.6\n", "    expected: 0.7\n"),
                             EXEMPLAR, "snippet.example.expected", r"returned 0\.6.*expected 0\.7"),
    "dangling_reference": (lambda r: _edit(r, EXEMPLAR, "related: []", "related: [grpo/clip_ratio/lowmean]"),
                           EXEMPLAR, "related[0]",
                           r"unknown metric 'grpo/clip_ratio/lowmean' \(did you mean 'grpo/clip_ratio/low_mean'\?\)"),
    "dangling_reference_in_variant": (
        lambda r: _edit(r, EXEMPLAR, "releases/tag/v0.26.0\"}\n", "releases/tag/v0.26.0\"}\n    related: [grpo/kl]\n"),
        EXEMPLAR, "variants[1].related[0]", r"unknown metric 'grpo/kl'"),
    "forbidden_term": (lambda r: _edit(r, EXEMPLAR, "（正在训练的策略", "（正在训练的政策"),
                       EXEMPLAR, "meaning.zh", r"forbidden term '政策'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_bad_input_one_line(case, mini_root, capsys):
    mutate, rel, field, pattern = CASES[case]
    mutate(mini_root)
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1
    assert len(lines) == 1, lines
    m = LINE.match(lines[0])
    assert m, f"not a path:line: field: message line: {lines[0]!r}"
    assert m["path"] == rel
    assert m["field"] == field
    assert re.search(pattern, m["message"]), m["message"]
    assert "Traceback" not in lines[0]


def test_error_lines_point_at_the_right_line(mini_root, capsys):
    line = _edit(mini_root, EXEMPLAR, "\nhealthy:", "\nhelthy:") + 1
    _, lines = _run(capsys, mini_root, "check")
    assert lines[0].startswith(f"{EXEMPLAR}:{line}: helthy:")


def test_every_error_in_one_run_sorted(mini_root, capsys):
    cases = ("unknown_field", "missing_translation", "html_in_translation", "invalid_latex", "wrong_example_output")
    for case in cases:
        CASES[case][0](mini_root)
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1
    fields = [LINE.match(ln)["field"] for ln in lines]
    assert set(fields) >= {"helthy", "title.vi", "title.zh"}, lines
    # the model is invalid (unknown field), so later stages are reported only for valid files
    numbers = [int(LINE.match(ln)["line"]) for ln in lines]
    assert numbers == sorted(numbers)


def test_latex_and_snippet_errors_together(mini_root, capsys):
    CASES["invalid_latex"][0](mini_root)
    CASES["wrong_example_output"][0](mini_root)
    CASES["html_in_translation"][0](mini_root)
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1
    assert [LINE.match(ln)["field"] for ln in lines] == ["title.zh", "formula.tex", "snippet.example.expected"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_build_reports_the_same_line_and_writes_nothing(case, mini_root, capsys):
    mutate, rel, field, pattern = CASES[case]
    mutate(mini_root)
    _, check_lines = _run(capsys, mini_root, "check")
    code, build_lines = _run(capsys, mini_root, "build")
    assert code == 1
    assert build_lines == check_lines
    assert not (mini_root / "site").exists()
    assert not list((mini_root / "build").glob("*")) if (mini_root / "build").exists() else True


def test_snippet_that_never_returns_times_out(mini_root, capsys, monkeypatch):
    import generator.snippets as snippets

    monkeypatch.setattr(snippets, "TIMEOUT_S", 1.0)
    _edit(mini_root, EXEMPLAR, "        per_micro_batch = []\n",
          "        per_micro_batch = []\n        while True:\n            pass\n")
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1 and len(lines) == 1
    assert re.search(r"snippet\.code: did not return within 1(\.0)? s", lines[0]), lines


def test_nan_in_example_inputs_reaches_the_snippet(mini_root, capsys):
    """YAML `.nan` (a reward function that returned None, a masked slot) survives the trip to the snippet runner."""
    _edit(mini_root, EXEMPLAR, "- [[0.70, 0.90, 0.60]", "- [[0.70, 0.90, .nan]")
    code, lines = _run(capsys, mini_root, "check")
    assert (code, lines) == (0, [])


def test_cache_never_hides_a_changed_example(mini_root, capsys):
    """A snippet that passed is cached by content; editing its example or code is a miss and is checked again."""
    assert _run(capsys, mini_root, "check") == (0, [])
    assert (mini_root / ".cache" / "atlas" / "results.json").is_file()
    CASES["wrong_example_output"][0](mini_root)
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1 and "snippet.example.expected" in lines[0]
    CASES["invalid_latex"][0](mini_root)
    code, lines = _run(capsys, mini_root, "check")
    assert [LINE.match(ln)["field"] for ln in lines] == ["formula.tex", "snippet.example.expected"]


VARIANTS = """variants:
  - from: 0.17.0
    to: {to1}
    change: {{en: Old behaviour., zh: 旧行为。, vi: Hành vi cũ.}}
    source: {{title: release {to1}}}
    summary: {{en: Old summary., zh: 旧摘要。, vi: Tóm tắt cũ.}}
  - from: {from2}
    to: null
    change: {{en: New behaviour., zh: 新行为。, vi: Hành vi mới.}}
    source: {{title: release {from2}}}
"""


@pytest.mark.parametrize(("to1", "from2", "field", "pattern"), [
    ("0.20.0", "0.21.0", "variants[1].from", r"gap: releases 0\.20\.0 to 0\.21\.0 are in no variant"),
    ("0.21.0", "0.20.0", "variants[1].from", r"overlap: range starting 0\.20\.0 overlaps the previous one"),
    ("0.20.0", "0.20.5", "variants[1].from", r"'0\.20\.5' is not a TRL release"),
    ("0.20.0", "0.20.0", None, None),
])
def test_version_ranges_are_checked(mini_root, capsys, to1, from2, field, pattern):
    import yaml

    path = mini_root / EXEMPLAR
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data.pop("variants", None)  # the exemplar's own history is replaced by the ranges under test
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
    text = text.replace("conformance:\n", VARIANTS.format(to1=to1, from2=from2) + "conformance:\n")
    path.write_text(text, encoding="utf-8")
    code, lines = _run(capsys, mini_root, "check")
    if field is None:
        assert (code, lines) == (0, [])
        return
    assert code == 1 and len(lines) == 1, lines
    m = LINE.match(lines[0])
    assert m["field"] == field and re.search(pattern, m["message"]), lines[0]
    assert int(m["line"]) == text[: text.index(f"from: {from2}")].count("\n") + 1


def test_since_must_name_a_real_release(mini_root, capsys):
    _edit(mini_root, EXEMPLAR, "since: 0.17.0", "since: 0.17.3")
    code, lines = _run(capsys, mini_root, "check")
    assert code == 1 and lines == [f"{EXEMPLAR}:4: since: '0.17.3' is not a TRL release (did you mean '0.17.0'?)"]
