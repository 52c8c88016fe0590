"""Conformance: each site version's GRPO pages reproduce what that version's pinned TRL release logs.

For every version in ``atlas.yml`` with the ``grpo`` trainer, the runs of its TRL release (``trl_runs.py``, executed
in that release's own virtualenv, see ``envs.py``) are compared with the page as that release logs it
(``generator.versions.resolve``): the resolved snippet, fed by the release's adapters (``adapters.py``), must
reproduce ``trainer.state.log_history`` on every log entry that holds the key. Where TRL changed a computation
between releases, the other release's snippet must fail on the same runs, so the suite tells the versions apart.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
from packaging.version import Version

from generator.config import load_config
from generator.load import Loaded, load_metrics
from generator.schema import SourceRef
from generator.snippets import as_floats, compile_function
from generator.versions import Resolved, resolve

from ..refs import code_refs, corrections_of
from .adapters import ADAPTERS, Adapter
from .envs import run_python
from .records import Run

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config(ROOT)
_RESULT = load_metrics(ROOT)  # (valid models, [parsed documents,] errors)
_LOADED, _LOAD_ERRORS = _RESULT[0], _RESULT[-1]
GRPO: dict[str, Loaded] = {it.model.id: it for it in _LOADED if it.model.trainer == "grpo"}
RELEASES = [v.trl for v in CONFIG.versions if "grpo" in v.trainers]  # newest first
LATEST = RELEASES[0]

# Keys HF's Trainer writes into every log_history entry that are not metrics of their own.
NOT_METRICS = {"step"}

# Keys whose value TRL computes differently in an older site version than in the latest one, in a way these
# single-process runs show (other changes, such as per-process vs. global means, only show with several processes).
# The older release's snippet must reproduce its runs and fail on the latest release's runs, and the other way round.
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "grpo/reward_std": "mean of per-group stds (0.26) vs. weighted std of the whole batch (>= 0.27)",
        "grpo/reward": "unscorable completions count as reward 0 (< 1.6) vs. left out (>= 1.6)",
        "grpo/frac_reward_zero_std": "a group of unscorable completions has std 0 (< 1.6: rewards 0) vs. no std and "
        "is not counted (>= 1.6)",
        "grpo/rewards/{name}/mean": "a NaN in the logging window makes it NaN (< 1.0) vs. is dropped (>= 1.0)",
        "grpo/rewards/{name}/std": "a NaN in the logging window makes it NaN (< 1.0) vs. is dropped (>= 1.0)",
        "grpo/clip_ratio/low_min": "per-process fraction (< 1.9) vs. per-completion fraction (>= 1.9)",
        "grpo/clip_ratio/high_max": "per-process fraction (< 1.9) vs. per-completion fraction (>= 1.9)",
        "grpo/loss": "DAPO normaliser not rescaled by steps_per_generation / GA (< 1.9.1), k3 not multiplied by "
        "the ratio (bias correction off by default before 1.10)",
    },
}


def uses(*releases: str) -> list[pytest.MarkDecorator]:
    """The marks of a test that reads these releases' runs: the session records them (conftest.py), and the test
    joins the first release's pytest-xdist group."""
    return [pytest.mark.trl(*releases), pytest.mark.xdist_group(f"trl-{releases[0]}")]


def resolved(metric_id: str, release: str) -> Resolved | None:
    return resolve(GRPO[metric_id].model, release)


def _variant_loc(it: Loaded, res: Resolved, field: str) -> tuple:
    """Where the field the resolved page uses lives in the YAML: the variant's replacement, or the page's own."""
    if res.variant is not None and getattr(res.variant, field) is not None:
        return ("variants", it.model.variants.index(res.variant), field)
    return (field,)


def where(it: Loaded, res: Resolved, field: str = "snippet") -> str:
    loc = _variant_loc(it, res, field) + (("code",) if field == "snippet" else ("checked",))
    return f"{it.path}:{it.line(*loc)}"


def logged_keys(metric_key: str, run: Run) -> list[str]:
    """A documented key as the run logs it: templates expanded with the run's reward / custom metric names."""
    if "{name}" in metric_key:
        return [metric_key.replace("{name}", n) for n in run.reward_func_names]
    if re.fullmatch(r"\{[a-z_]+\}", metric_key):  # a user metric logged through log_metric(name, value)
        return list(run.custom_metric_names)
    return [metric_key]


def _fresh(value: Any) -> Any:
    """A copy of the adapter's inputs, so that a snippet working in place cannot change the shared recordings."""
    if hasattr(value, "clone"):
        return value.clone()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def _same(got: float | None, logged: float | None, atol: float) -> bool:
    if logged is None or (isinstance(logged, float) and math.isnan(logged)):
        return got is None or math.isnan(got)
    if got is None or math.isnan(got):
        return False
    return got == logged if atol == 0 else abs(got - logged) <= atol


@dataclass
class Outcome:
    """A snippet against one release's runs: every value compared, and what stopped a comparison."""

    where: str
    release: str
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def compare(it: Loaded, res: Resolved, release: str, adapter: Adapter, runs: dict[str, Run]) -> Outcome:
    """Run the resolved page's snippet on every log entry of every run the adapter uses."""
    snippet = res.metric.snippet
    out = Outcome(where(it, res), release)
    try:
        fn = compile_function(snippet.code, snippet.function, f"{it.path}#snippet")
    except Exception as exc:  # noqa: BLE001 - name the file
        out.errors.append(f"{out.where}: the snippet does not define {snippet.function}: {type(exc).__name__}: {exc}")
        return out
    signature = inspect.signature(fn)
    params = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for run_name in adapter.runs:
        if run_name not in runs:
            out.errors.append(f"{out.where}: trl {release} has no run '{run_name}' (adapters.py names it)")
            continue
        run = runs[run_name]
        keys = logged_keys(res.logged_as, run)
        entries = [e for e in run.entries() if any(k in e for k in keys)]
        if not entries:
            out.errors.append(f"{out.where}: trl {release}, run {run_name} never logged {keys}: nothing to check")
            continue
        for entry in entries:
            step = entry["step"]
            for inputs, key_or_keys in adapter.cases(run, entry):
                keys_here = [key_or_keys] if isinstance(key_or_keys, str) else list(key_or_keys)
                if not any(k in entry for k in keys_here):
                    continue
                at = f"trl {release}, run {run_name}, step {step}"
                kwargs = inputs if takes_any else {k: v for k, v in inputs.items() if k in params}
                try:
                    signature.bind(**kwargs)
                except TypeError as exc:
                    out.errors.append(
                        f"{out.where}: {snippet.function}{signature} cannot be fed by the adapter for "
                        f"trl {release} (it offers {sorted(inputs)}): {exc}"
                    )
                    return out
                try:
                    got: Any = as_floats(fn(**_fresh(kwargs)))
                except Exception as exc:  # noqa: BLE001 - report which step broke the snippet
                    out.errors.append(f"{out.where}: {at}: snippet raised {type(exc).__name__}: {exc}")
                    continue
                if isinstance(key_or_keys, str) and isinstance(got, list):
                    out.errors.append(f"{out.where}: {at}: snippet returned a list {got!r}, TRL logged one number")
                    continue
                if not isinstance(key_or_keys, str) and (not isinstance(got, list) or len(got) != len(keys_here)):
                    out.errors.append(
                        f"{out.where}: {at}: snippet returned {got!r}, expected one value per {keys_here}"
                    )
                    continue
                values = [got] if isinstance(key_or_keys, str) else got
                for key, value in zip(keys_here, values, strict=True):
                    logged = entry.get(key)
                    out.compared += 1
                    if not _same(value, logged, adapter.atol):
                        diff = abs(value - logged) if value is not None and logged is not None else float("nan")
                        tol = "exactly" if adapter.atol == 0 else f"within {adapter.atol:g}"
                        out.mismatches.append(
                            f"{out.where}: {at}: {key}: TRL logged {logged!r}, snippet returned {value!r} "
                            f"(|diff| {diff:.3g}, expected to agree {tol})"
                        )
    return out


# --------------------------------------------------------------------------------------------------------------------
# Every checked key of every version reproduces its release
# --------------------------------------------------------------------------------------------------------------------


def _checked_cases() -> list:
    cases = []
    for release in RELEASES:
        for mid in sorted(GRPO):
            res = resolved(mid, release)
            if res is not None and res.metric.conformance.checked:
                cases.append(pytest.param(release, mid, marks=uses(release), id=f"{release}:{mid}"))
    return cases


@pytest.mark.parametrize(("release", "metric_id"), _checked_cases())
def test_snippet_reproduces_trl(release: str, metric_id: str, recorded) -> None:
    it, res = GRPO[metric_id], resolved(metric_id, release)
    adapter = ADAPTERS.get(release, {}).get(metric_id)
    assert adapter is not None, (
        f"{where(it, res, 'conformance')}: {metric_id} is conformance.checked: true for trl {release}, "
        f"but tests/conformance/adapters.py has no adapter for it on that release"
    )
    out = compare(it, res, release, adapter, recorded(release))
    if out.errors or out.mismatches:
        pytest.fail("\n".join(out.errors + out.mismatches), pytrace=False)
    assert out.compared > 0, f"{out.where}: nothing was compared for trl {release}"


# --------------------------------------------------------------------------------------------------------------------
# Versions are told apart
# --------------------------------------------------------------------------------------------------------------------


def _told_apart_cases() -> list:
    return [
        pytest.param(release, mid, marks=uses(release, LATEST), id=f"{release}:{mid}")
        for release, keys in TOLD_APART.items()
        if release in RELEASES and release != LATEST
        for mid in sorted(keys)
    ]


@pytest.mark.parametrize(("release", "metric_id"), _told_apart_cases())
def test_older_and_latest_snippets_are_told_apart(release: str, metric_id: str, recorded) -> None:
    it = GRPO[metric_id]
    old, new = resolved(metric_id, release), resolved(metric_id, LATEST)
    why = TOLD_APART[release][metric_id]
    assert old is not None and new is not None, f"{it.path}: {metric_id} must exist in trl {release} and {LATEST}"
    assert old.metric.snippet.code != new.metric.snippet.code, (
        f"{where(it, old)}: the page for trl {release} uses the trl {LATEST} snippet, but TRL changed the "
        f"computation: {why}. Give the variant covering {release} its own snippet."
    )
    problems = []
    for snippet_of, res, runs_of in ((release, old, LATEST), (LATEST, new, release)):
        adapter = ADAPTERS[runs_of][metric_id]
        out = compare(it, res, runs_of, adapter, recorded(runs_of))
        if out.errors:
            problems += out.errors
        elif not out.mismatches:
            problems.append(
                f"{out.where}: the trl {snippet_of} snippet also reproduces all {out.compared} values of the "
                f"trl {runs_of} runs, so the suite cannot tell the versions apart ({why})"
            )
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------------------------------------------------
# Pages and adapters agree with what each release logs
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("release", [pytest.param(r, marks=uses(r)) for r in RELEASES])
def test_every_logged_key_has_a_page_in_that_version(release: str, recorded) -> None:
    """Every key the trainer actually logged (templates expanded) has a page that exists in that release."""
    missing: dict[str, list[str]] = {}
    for run in recorded(release).values():
        documented = {
            k for mid in GRPO if (res := resolved(mid, release)) is not None for k in logged_keys(res.logged_as, run)
        }
        for entry in run.entries():
            for key in entry:
                if key not in NOT_METRICS and key not in documented:
                    missing.setdefault(key, []).append(f"{run.name}@{entry['step']}")
    lines = []
    for key, seen in sorted(missing.items()):
        page = next((it for it in GRPO.values() if it.model.key == key), None)
        hint = (
            f"; {page.path}:{page.line('since')} says since {page.model.since}, until {page.model.until}"
            if page is not None
            else ""
        )
        lines.append(f"{key} (e.g. run {seen[0]}){hint}")
    load_errors = [str(e) for e in _LOAD_ERRORS if "/grpo/" in str(e.path)]
    assert not lines, (
        f"logged by trl {release}'s GRPOTrainer but without a metrics/grpo page for that release:\n"
        + "\n".join(lines)
        + ("\nYAML files that failed to load:\n" + "\n".join(load_errors) if load_errors else "")
    )


@pytest.mark.parametrize("release", RELEASES)
def test_checked_false_exactly_where_no_adapter(release: str) -> None:
    adapters = ADAPTERS.get(release, {})
    problems = []
    for mid in sorted(GRPO):
        it, res = GRPO[mid], resolved(mid, release)
        if res is None:
            if mid in adapters:
                problems.append(
                    f"adapters.py: an adapter for {mid} on trl {release}, which does not log it "
                    f"({it.path}:{it.line('since')}: since {it.model.since}, until {it.model.until})"
                )
            continue
        if res.metric.conformance.checked and mid not in adapters:
            problems.append(f"{where(it, res, 'conformance')}: checked: true for trl {release}, but no adapter")
        if not res.metric.conformance.checked and mid in adapters:
            problems.append(f"{where(it, res, 'conformance')}: checked: false for trl {release}, but an adapter exists")
    problems += [
        f"adapters.py: an adapter for {mid}, which has no metrics/grpo page"
        for mid in sorted(set(adapters) - set(GRPO))
    ]
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------------------------------------------------
# Options a page tells the reader to set exist in that release
# --------------------------------------------------------------------------------------------------------------------

_API = """
import dataclasses, inspect, json
from trl import GRPOConfig, GRPOTrainer
print(json.dumps({"config": [f.name for f in dataclasses.fields(GRPOConfig)],
                  "trainer": list(inspect.signature(GRPOTrainer.__init__).parameters)}))
"""
# a name in a code span, not part of a key path (`clip_ratio/low_mean`), an attribute (`config.eos_token_id`), a call
# (`nanmin(...)`) or a command-line flag (`--logprobs-mode`); quoted strings inside the span are values, not names
_NAME = re.compile(r"(?<![\w./-])([A-Za-z_]\w*)(?![\w/(-]|\.\w)")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


@functools.cache
def grpo_api(release: str) -> tuple[frozenset[str], frozenset[str]]:
    """The fields of ``GRPOConfig`` and the arguments of ``GRPOTrainer.__init__`` in that release, read from it."""
    api = json.loads(run_python(release, _API))
    return frozenset(api["config"]), frozenset(api["trainer"])


def named_in_code(text: str) -> set[str]:
    return {n for span in re.findall(r"`([^`]*)`", text) for n in _NAME.findall(_QUOTED.sub("", span))}


@pytest.mark.parametrize("release", RELEASES)
def test_options_on_the_pages_exist_in_that_release(release: str) -> None:
    """Every config entry of "Logged when" is a GRPOConfig field (or GRPOTrainer argument) of the page's release,
    and every GRPOConfig option a troubleshooting action or a cheat-sheet `first_try` names in code, in any language,
    exists there too. An option is a name that some documented release's GRPOConfig has, so a 1.16-only option on a
    0.26 page fails."""
    fields, arguments = grpo_api(release)
    options = frozenset().union(*(grpo_api(r)[0] for r in RELEASES))
    problems = []
    for mid in sorted(GRPO):
        it, res = GRPO[mid], resolved(mid, release)
        if res is None:
            continue
        at = _variant_loc(it, res, "logged_when") + ("config",)
        for i, flag in enumerate(res.metric.logged_when.config):
            if flag.name not in fields | arguments:
                problems.append(
                    f"{it.path}:{it.line(*at, i, 'name')}: `{flag.name}` is neither a GRPOConfig field nor "
                    f"a GRPOTrainer argument in trl {release}"
                )
        at = _variant_loc(it, res, "troubleshooting")
        for i, item in enumerate(res.metric.troubleshooting):
            for j, action in enumerate(item.actions):
                for lang, text in sorted(action.root.items()):
                    for name in sorted((named_in_code(text) & options) - fields):
                        problems.append(
                            f"{it.path}:{it.line(*at, i, 'actions', j, lang)}: the trl {release} page "
                            f"tells the reader to set `{name}`, which its GRPOConfig does not have"
                        )
        sheet = res.metric.cheatsheet
        at = _variant_loc(it, res, "cheatsheet") + ("first_try",)
        for lang, text in sorted(sheet.first_try.root.items()) if sheet and sheet.first_try else []:
            for name in sorted((named_in_code(text) & options) - fields):
                problems.append(f"{it.path}:{it.line(*at, lang)}: the trl {release} cheat-sheet tells the reader to "
                                f"set `{name}`, which its GRPOConfig does not have")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------------------------------------------------
# Line numbers the pages cite point at that release's code
# --------------------------------------------------------------------------------------------------------------------


@functools.cache
def _code_lines(release: str, file: str) -> list[str]:
    """The lines of ``file`` (a path such as `trl/trainer/grpo_trainer.py`) in the release's installed TRL."""
    site = run_python(release, "import pathlib, trl; print(pathlib.Path(trl.__file__).parent.parent)").strip()
    return (Path(site) / file).read_text(encoding="utf-8").splitlines()


def code_line(ref: SourceRef) -> str | None:
    """The stripped text of the line ``ref`` names in its release's installed TRL (None past the end of the file)."""
    lines = _code_lines(ref.version, ref.file)
    return lines[ref.line - 1].strip() if ref.line <= len(lines) else None


def test_cited_lines_exist_and_a_correction_cites_the_same_code_in_each_release() -> None:
    """Every TRL line a GRPO file cites in a release under test is in that release's file and not blank (line
    numbers drift between releases; a comment heading a block is a fair target); and the refs of one correction
    (`source` and `also_at`) show the same line of code, so a page on an older line links to the code the correction
    is about."""
    problems = []
    for mid in sorted(GRPO):
        it = GRPO[mid]
        m = it.model
        for loc, ref in code_refs(m):
            if ref.package == "trl" and ref.version in RELEASES:
                text = code_line(ref)
                if not text:
                    problems.append(f"{it.path}:{it.line(*loc)}: {ref.file}:{ref.line} of trl {ref.version} is "
                                    f"{'past the end of the file' if text is None else 'a blank line'}")
        for loc, c in corrections_of(m):
            refs = [r for r in [c.source, *c.also_at] if r.package == "trl" and r.version in RELEASES]
            texts = {code_line(r) for r in refs}
            if len(texts) > 1:
                problems.append(f"{it.path}:{it.line(*loc)}: the refs of one correction show different code: "
                                + "; ".join(f"{r.version}:{r.line} {code_line(r)!r}" for r in refs))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


# --------------------------------------------------------------------------------------------------------------------
# The harness itself
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("release", [pytest.param(r, marks=uses(r)) for r in RELEASES])
def test_harness_records_what_trl_used(release: str, recorded) -> None:
    """The recorded inputs are consistent with what TRL and HF logged (guards the probes, not the snippets)."""
    for run in recorded(release).values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        for m in run.micro_batches:
            # the plain-forward logits belong to the same parameters as TRL's log-probs and entropies
            logp = torch.log_softmax(m.logits / run.args.temperature, dim=-1)
            ent = -(logp.exp() * logp).sum(-1)
            logp = logp.gather(-1, m.completion_ids.unsqueeze(-1)).squeeze(-1)
            gap = ((logp - m.per_token_logps).abs() * m.mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's log-probs differ by {gap}"
            gap = ((ent - m.entropies).abs() * m.mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's entropies differ by {gap}"
        for e in run.entries():
            last = run.opt_for(e["step"])[-1]
            assert last.learning_rate == e["learning_rate"], f"trl {release}, {run.name}@{e['step']}: lr probe"
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"
        for g in run.gen_batches:
            assert int(g.num_items_in_batch) == int(g.completion_lengths.sum()), f"{run.name}: num_items_in_batch"
            assert torch.equal(g.length_mask, g.completion_mask), f"{run.name}: completion mask"
            assert len(g.completions) == len(g.completion_ids), f"{run.name}: completions"


def _values(run: Run, key: str) -> list[float]:
    return [e[key] for e in run.entries() if e.get(key) is not None and e[key] == e[key]]


@pytest.mark.parametrize("release", [pytest.param(r, marks=uses(r)) for r in RELEASES])
def test_runs_are_not_trivial(release: str, recorded) -> None:
    """The settings really exercise the code paths the snippets describe."""
    runs = recorded(release)
    main = runs["main"]
    assert max(_values(main, "kl")) > 0, "kl stayed 0: the policy never moved away from the reference"
    assert _values(main, "kl")[0] == 0.0, "kl must be exactly 0 before the first update"
    for key in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "clip_ratio/high_max"):
        assert max(_values(main, key)) > 0, f"{key} stayed 0: no clipping happened"
    assert max(_values(main, "clip_ratio/low_min")) > 0, "clip_ratio/low_min stayed 0 in every step"
    assert any(m.old_per_token_logps_input is not None for m in main.micro_batches), "TRL never passed old log-probs"
    assert main.args.steps_per_generation != main.args.gradient_accumulation_steps  # the 1.9.1 loss rescale shows
    # a micro-batch mixes prompt groups
    assert any(len({tuple(r.tolist()) for r in m.prompt_ids}) > 1 for m in main.micro_batches)
    # rewards: some None, weights not all 1, some truncated and some terminated completions
    assert any(g.rewards_per_func.isnan().any() for g in main.gen_batches), "no reward function returned None"
    assert any((g.reward_weights != 1).any() for g in main.gen_batches)
    truncated = [t for g in main.gen_batches for t in g.is_truncated.tolist()]
    assert any(truncated) and not all(truncated), "need both truncated and terminated completions"
    # groups of different spread, so that the mean of the group stds is not the std of the whole batch
    spreads = []
    for g in main.gen_batches:
        rewards = (g.rewards_per_func * g.reward_weights).nansum(1)
        group_std = rewards.view(-1, g.num_generations).std(1)
        spreads.append(float(group_std.max() - group_std.min()))
        assert abs(group_std.mean() - rewards.std()) > 1e-3, f"group and batch std agree at step {g.log_step}"
    assert max(spreads) > 0.1, f"the groups of every generation batch have about the same spread: {spreads}"
    assert all(0 < g < main.args.max_grad_norm for g in _values(main, "grad_norm")), "HF clipped the gradients"
    # the window run: several generation batches per entry, unscorable rows, an all-None reward column
    window = runs["window"]
    assert any(len(window.gen_for(e["step"])) > 1 for e in window.entries())
    assert any(g.rewards_per_func.isnan().all(dim=1).any() for g in window.gen_batches), "no unscorable completion"
    assert any(g.rewards_per_func.isnan().all(dim=0).any() for g in window.gen_batches), "no all-None column"
    unscorable_groups = [
        g.rewards_per_func.isnan().all(1).view(-1, g.num_generations).all(1) for g in window.gen_batches
    ]
    assert any(u.any() for u in unscorable_groups), "no group of only unscorable completions"
    assert any(v is None or v != v for e in window.entries() for v in e.values()), "no key was logged None / NaN"
    assert all(m.old_per_token_logps_input is None for m in window.micro_batches), "window run should be on-policy"
    assert set(_values(runs["grpo_batch"], "frac_reward_zero_std")) <= {0.0, 1.0}, "scale_rewards='batch' run"
    if "cispo" in runs:
        assert max(_values(runs["cispo"], "cispo_clip_ratio")) > 0, "cispo_clip_ratio stayed 0"
    if "vespo" in runs:
        assert any(abs(v - 1) > 1e-3 for v in _values(runs["vespo"], "vespo/phi_seq_mean")), "phi stayed 1"
    if "entropy" in runs:
        coefs = _values(runs["entropy"], "entropy_coef")
        assert len(set(coefs)) > 1, f"the adaptive entropy coefficient never moved: {coefs}"
        assert _values(runs["entropy"], "policy_loss"), "policy_loss was not logged"
    if Version(release) >= Version("1.0.0"):  # reward functions may call log_metric
        assert main.custom_metric_names, "no reward function called log_metric"
