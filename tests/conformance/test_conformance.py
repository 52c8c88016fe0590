"""Conformance: each site line's pages reproduce what that line's pinned TRL release logs, for every trainer with a
package in ``trainers/``.

For every release line that shows such a trainer, the trainer's runs of that release (recorded in the release's own
virtualenv, see ``record.py`` and ``envs.py``) are compared with the pages as that release logs them
(``real_atlas().editions``): the resolved snippet, fed by the package's adapter for that release, must reproduce
``trainer.state.log_history`` on every log entry that holds the key. Where TRL changed a computation between
releases, the other release's snippet must fail on the same runs, so the suite tells the lines apart. The options,
defaults and code lines the pages name are read from the release itself.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any

import pytest

from generator.read.metric import SourceRef
from generator.resolve.variants import Resolved

from ..conftest import real_atlas
from ..refs import code_refs, corrections_of
from .api import ReleaseApi
from .cases import TrainerLine, latest, trainer_lines, uses
from .driver import NOT_METRICS, Run, compare, logged_keys, where
from .envs import run_python
from .trainers import HERE as PACKAGES
from .trainers import package


def _metric_files(trainer: str) -> list:
    """Every metric file of ``trainer`` (on a line or not), by path."""
    return sorted((it for it in real_atlas().sources.metrics if it.model.trainer == trainer), key=lambda it: it.path)


def _checked_cases() -> list:
    return [pytest.param((tl, res), marks=uses(tl.trainer, tl.release), id=f"{tl.release}:{res.id}")
            for tl in trainer_lines() for res in tl.te.metrics if res.metric.conformance.checked]


def _told_apart_cases() -> list:
    cases = []
    for tl in trainer_lines():
        new = latest(tl.trainer)
        if tl.release == new.release:
            continue
        for mid in sorted(tl.package.TOLD_APART.get(tl.release, {})):
            cases.append(pytest.param((tl, new, mid), marks=uses(tl.trainer, tl.release, new.release),
                                      id=f"{tl.release}:{mid}"))
    return cases


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = metafunc.fixturenames
    if "checked_case" in names:  # (line, a metric checked on it)
        metafunc.parametrize("checked_case", _checked_cases())
    elif "told_apart_case" in names:  # (older line, latest line, metric id)
        metafunc.parametrize("told_apart_case", _told_apart_cases())
    elif "line" in names:
        reads_runs = "runs" in names  # the session records what the selected tests read, and only that
        metafunc.parametrize("line", [pytest.param(tl, marks=uses(tl.trainer, tl.release) if reads_runs else (),
                                                   id=tl.id) for tl in trainer_lines()])
    elif "trainer" in names:
        metafunc.parametrize("trainer", sorted({tl.trainer for tl in trainer_lines()}))


@pytest.fixture
def runs(line: TrainerLine, recorded) -> dict[str, Run]:
    """The line's recorded runs of its trainer, by name."""
    return recorded(line.trainer, line.release)


def _package_dir(trainer: str) -> str:
    return f"tests/conformance/trainers/{trainer}/"


def _fail_if(problems: list[str]) -> None:
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------------------------------------------------
# Every checked key of every line reproduces its release
# --------------------------------------------------------------------------------------------------------------------


def test_snippet_reproduces_trl(checked_case: tuple[TrainerLine, Resolved], recorded) -> None:
    line, res = checked_case
    adapter = line.package.ADAPTERS.get(line.release, {}).get(res.id)
    if adapter is None:
        pytest.fail(f"{where(res, 'conformance')}: {res.id} is conformance.checked: true for trl {line.release}, "
                    f"but {_package_dir(line.trainer)} has no adapter for it on that release", pytrace=False)
    out = compare(res, line.release, adapter, recorded(line.trainer, line.release))
    _fail_if(out.errors + out.mismatches)
    _fail_if([f"{out.where}: nothing was compared for trl {line.release}"] if not out.compared else [])


# --------------------------------------------------------------------------------------------------------------------
# Lines are told apart
# --------------------------------------------------------------------------------------------------------------------


def test_older_and_latest_snippets_are_told_apart(told_apart_case: tuple[TrainerLine, TrainerLine, str],
                                                  recorded) -> None:
    line, latest_line, metric_id = told_apart_case
    old, new = line.edition.metric(metric_id), latest_line.edition.metric(metric_id)
    why = line.package.TOLD_APART[line.release][metric_id]
    if old is None or new is None:
        pytest.fail(f"{_package_dir(line.trainer)}: TOLD_APART names {metric_id}, which must exist in "
                    f"trl {line.release} and {latest_line.release}", pytrace=False)
    if old.metric.snippet.code == new.metric.snippet.code:
        pytest.fail(f"{where(old)}: the page for trl {line.release} uses the trl {latest_line.release} snippet, but "
                    f"TRL changed the computation: {why}. Give the variant covering {line.release} its own snippet.",
                    pytrace=False)
    problems = []
    for snippet_of, res, runs_of in ((line, old, latest_line), (latest_line, new, line)):
        adapter = runs_of.package.ADAPTERS[runs_of.release][metric_id]
        out = compare(res, runs_of.release, adapter, recorded(runs_of.trainer, runs_of.release))
        if out.errors:
            problems += out.errors
        elif not out.mismatches:
            problems.append(
                f"{out.where}: the trl {snippet_of.release} snippet also reproduces all {out.compared} values of "
                f"the trl {runs_of.release} runs, so the suite cannot tell the lines apart ({why})"
            )
    _fail_if(problems)


def test_tables_name_only_lines_and_pages(trainer: str) -> None:
    """The package's ADAPTERS and TOLD_APART name releases of lines that show the trainer (a table for a line
    since removed would go unchecked), and TOLD_APART only older lines."""
    pkg, lines = package(trainer), trainer_lines(trainer)
    releases = [tl.release for tl in lines]
    problems = [f"{_package_dir(trainer)}: ADAPTERS has a table for trl {r}, which no site line showing "
                f"{trainer} is on (lines: {releases})" for r in sorted(set(pkg.ADAPTERS) - set(releases))]
    problems += [f"{_package_dir(trainer)}: TOLD_APART has a row for trl {r}, which is not an older site line "
                 f"showing {trainer} (older lines: {releases[1:]})"
                 for r in sorted(set(pkg.TOLD_APART) - set(releases[1:]))]
    _fail_if(problems)


# --------------------------------------------------------------------------------------------------------------------
# Pages and adapters agree with what each release logs
# --------------------------------------------------------------------------------------------------------------------


def test_every_logged_key_has_a_page_on_that_line(line: TrainerLine, runs: dict[str, Run]) -> None:
    """Every key the trainer actually logged (templates expanded) has a page on the line."""
    _fail_if([] if runs else [f"{line.id}: no run recorded"])
    _fail_if([f"{run.name}: a run of {run.trainer} with trl {run.trl_version}, not of {line.trainer} with "
              f"trl {line.release}" for run in runs.values()
              if (run.trainer, run.trl_version) != (line.trainer, line.release)])
    missing: dict[str, list[str]] = {}
    for run in runs.values():
        documented = {k for res in line.te.metrics for k in logged_keys(res.logged_as, run)}
        for entry in run.entries():
            for key in entry:
                if key not in NOT_METRICS and key not in documented:
                    missing.setdefault(key, []).append(f"{run.name}@{entry['step']}")
    lines = []
    for key, seen in sorted(missing.items()):
        page = next((it for it in _metric_files(line.trainer) if it.model.key == key), None)
        hint = (f"; {page.path}:{page.line('since')} says since {page.model.since}, until {page.model.until}"
                if page is not None else "")
        lines.append(f"{key} (e.g. run {seen[0]}){hint}")
    if lines:
        pytest.fail(f"logged by trl {line.release}'s {line.te.cls.name} but without a metrics/{line.trainer} page on "
                    "that line:\n" + "\n".join(lines), pytrace=False)


def test_checked_exactly_where_an_adapter_exists(line: TrainerLine) -> None:
    adapters = line.package.ADAPTERS.get(line.release, {})
    problems = []
    files = _metric_files(line.trainer)
    for it in files:
        mid, res = it.model.id, line.edition.metric(it.model.id)
        if res is None:
            if mid in adapters:
                problems.append(
                    f"{_package_dir(line.trainer)}: an adapter for {mid} on trl {line.release}, which does not "
                    f"log it ({it.path}:{it.line('since')}: since {it.model.since}, until {it.model.until})"
                )
            continue
        if res.metric.conformance.checked and mid not in adapters:
            problems.append(f"{where(res, 'conformance')}: checked: true for trl {line.release}, but no adapter")
        if not res.metric.conformance.checked and mid in adapters:
            problems.append(f"{where(res, 'conformance')}: checked: false for trl {line.release}, but an adapter "
                            "exists")
    problems += [f"{_package_dir(line.trainer)}: an adapter for {mid}, which has no metrics/{line.trainer} page"
                 for mid in sorted(set(adapters) - {it.model.id for it in files})]
    _fail_if(problems)


# --------------------------------------------------------------------------------------------------------------------
# What the pages and the trainer file say about the configuration holds in that release
# --------------------------------------------------------------------------------------------------------------------

# a name in a code span, not part of a key path (`clip_ratio/low_mean`), an attribute (`config.eos_token_id`), a call
# (`nanmin(...)`) or a command-line flag (`--logprobs-mode`); quoted strings inside the span are values, not names
_NAME = re.compile(r"(?<![\w./-])([A-Za-z_]\w*)(?![\w/(-]|\.\w)")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


def config_fields(api: ReleaseApi, line: TrainerLine) -> frozenset[str]:
    return frozenset(api(line.release, line.te.cls)["config"])


def named_in_code(text: str) -> set[str]:
    return {n for span in re.findall(r"`([^`]*)`", text) for n in _NAME.findall(_QUOTED.sub("", span))}


def test_options_on_the_pages_exist_in_that_release(line: TrainerLine, release_api: ReleaseApi) -> None:
    """Every config entry of "Logged when" is a field of the line's config class (or an argument of its trainer
    class), and every option a troubleshooting action or a cheat-sheet `first_try` names in code, in any language,
    exists there too. An option is a name that some line's config class has, so a 1.16-only option on a 0.26 page
    fails. The classes are the trainer file's `classes` for the line's release."""
    cls = line.te.cls
    fields, arguments = config_fields(release_api, line), frozenset(release_api(line.release, cls)["trainer"])
    options = frozenset().union(*(config_fields(release_api, tl) for tl in trainer_lines(line.trainer)))
    problems = []
    for res in line.te.metrics:
        it = res.item
        at = res.origin["logged_when"] + ("config",)
        for i, flag in enumerate(res.metric.logged_when.config):
            if flag.name not in fields | arguments:
                problems.append(f"{it.path}:{it.line(*at, i, 'name')}: `{flag.name}` is neither a {cls.config} "
                                f"field nor a {cls.name} argument in trl {line.release}")
        at = res.origin["troubleshooting"]
        for i, item in enumerate(res.metric.troubleshooting):
            for j, action in enumerate(item.actions):
                for lang, text in sorted(action.root.items()):
                    problems += [f"{it.path}:{it.line(*at, i, 'actions', j, lang)}: the trl {line.release} page tells "
                                 f"the reader to set `{name}`, which its {cls.config} does not have"
                                 for name in sorted((named_in_code(text) & options) - fields)]
        sheet = res.metric.cheatsheet
        at = res.origin["cheatsheet"] + ("first_try",)
        for lang, text in sorted(sheet.first_try.root.items()) if sheet and sheet.first_try else []:
            problems += [f"{it.path}:{it.line(*at, lang)}: the trl {line.release} cheat-sheet tells the reader to set "
                         f"`{name}`, which its {cls.config} does not have"
                         for name in sorted((named_in_code(text) & options) - fields)]
    _fail_if(problems)


def _literal(source: str) -> Any:
    """A default written as Python source, as a value (the source itself when it is not a literal)."""
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return source


def same_default(written: str, actual: str) -> bool:
    """Two defaults written as Python source are the same value of the same type: `0.0` is `0.`, but `1` is neither
    `1.0` nor `True`."""
    a, b = _literal(written), _literal(actual)
    return type(a) is type(b) and a == b


def test_crucial_defaults_are_that_releases(line: TrainerLine, release_api: ReleaseApi) -> None:
    """Every crucial setting of the trainer file has, for the line's release, the default that the release's config
    class gives its field; `value: null` means the release has no such field."""
    cls, trainer = line.te.cls, line.te.trainer
    defaults = release_api(line.release, cls)["defaults"]
    problems = []
    for crucial, default in line.te.defaults:
        i = trainer.crucial.index(crucial)
        at = f"{line.te.item.path}:{line.te.item.line('crucial', i, 'defaults', crucial.defaults.index(default))}"
        if default.value is None:
            if crucial.option in defaults:
                problems.append(f"{at}: {crucial.option}: null (no such setting), but trl {line.release}'s "
                                f"{cls.config} has it, with default {defaults[crucial.option]}")
        elif crucial.option not in defaults:
            problems.append(f"{at}: {crucial.option}: trl {line.release}'s {cls.config} has no such field")
        elif defaults[crucial.option] is None:
            problems.append(f"{at}: {crucial.option}: trl {line.release}'s {cls.config} gives it no default")
        elif not same_default(default.value, defaults[crucial.option]):
            problems.append(f"{at}: {crucial.option}: {default.value}, but trl {line.release}'s {cls.config} "
                            f"defaults to {defaults[crucial.option]}")
    _fail_if(problems)


# --------------------------------------------------------------------------------------------------------------------
# Line numbers the pages cite point at that release's code
# --------------------------------------------------------------------------------------------------------------------


@functools.cache
def _code_lines(release: str, file: str) -> list[str]:
    """The lines of ``file`` (a path such as `trl/trainer/grpo_trainer.py`) in the release's installed TRL."""
    return (_site_packages(release) / file).read_text(encoding="utf-8").splitlines()


@functools.cache
def _site_packages(release: str) -> Path:
    """Where the release's interpreter installs packages (asked without importing TRL, which takes seconds)."""
    return Path(run_python(release, "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())


def code_line(ref: SourceRef) -> str | None:
    """The stripped text of the line ``ref`` names in its release's installed TRL (None past the end of the file)."""
    lines = _code_lines(ref.version, ref.file)
    return lines[ref.line - 1].strip() if ref.line <= len(lines) else None


def test_cited_trl_lines_exist(line: TrainerLine) -> None:
    """Every TRL line a metric file of the trainer cites in the line's release is in that release's file and not
    blank (line numbers drift between releases; a comment heading a block is a fair target)."""
    problems = []
    for it in _metric_files(line.trainer):
        for loc, ref in code_refs(it.model):
            if ref.package == "trl" and ref.version == line.release:
                text = code_line(ref)
                if not text:
                    problems.append(f"{it.path}:{it.line(*loc)}: {ref.file}:{ref.line} of trl {ref.version} is "
                                    f"{'past the end of the file' if text is None else 'a blank line'}")
    _fail_if(problems)


def test_a_correction_cites_the_same_code_in_each_release(trainer: str) -> None:
    """The refs of one correction (`source` and `also_at`) in the releases of the lines showing the trainer show the
    same line of code, so a page on an older line links to the code the correction is about."""
    releases = {tl.release for tl in trainer_lines(trainer)}
    problems = []
    for it in _metric_files(trainer):
        for loc, c in corrections_of(it.model):
            refs = [r for r in [c.source, *c.also_at] if r.package == "trl" and r.version in releases]
            if len({code_line(r) for r in refs}) > 1:
                problems.append(f"{it.path}:{it.line(*loc)}: the refs of one correction show different code: "
                                + "; ".join(f"{r.version}:{r.line} {code_line(r)!r}" for r in refs))
    _fail_if(problems)


def test_trainer_packages_are_complete_and_tested() -> None:
    """Every folder in trainers/ is a package providing the interface (``trainers.package`` says what it lacks), for
    a trainer that some site line shows: a package nothing runs would check nothing."""
    shown = {tl.trainer for tl in trainer_lines()}
    problems = []
    for folder in sorted(p for p in PACKAGES.iterdir() if p.is_dir() and p.name != "__pycache__"):
        try:
            package(folder.name)
        except (ImportError, TypeError) as exc:
            problems.append(f"{folder.relative_to(PACKAGES.parents[2])}: {type(exc).__name__}: {exc}")
            continue
        if folder.name not in shown:
            problems.append(f"{folder.relative_to(PACKAGES.parents[2])}: no site line shows a trainer "
                            f"'{folder.name}' (metrics/{folder.name}/trainer.yaml, atlas.yml versions)")
    _fail_if(problems)
