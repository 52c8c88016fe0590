"""Conformance: every GRPO metric page's reference snippet reproduces what trl==1.16.0's GRPOTrainer logs.

The runs (``trl_runs.py``) are real GRPOTrainer trainings on CPU with a tiny local model; the adapters
(``adapters.py``) turn what a run recorded into each snippet's keyword arguments; the snippet's return value is then
compared with ``trainer.state.log_history`` on every log entry that holds the key.
"""

from __future__ import annotations

import inspect
import math
import re
from pathlib import Path
from typing import Any

import pytest

from generator.load import Loaded, load_metrics
from generator.snippets import as_floats, compile_function

from .adapters import ADAPTERS, Adapter
from .trl_runs import Run

pytestmark = [pytest.mark.conformance, pytest.mark.xdist_group("trl116")]

ROOT = Path(__file__).resolve().parents[2]
_RESULT = load_metrics(ROOT)  # (valid models, [parsed documents,] errors)
_LOADED, _LOAD_ERRORS = _RESULT[0], _RESULT[-1]
GRPO: dict[str, Loaded] = {it.model.id: it for it in _LOADED if it.model.trainer == "grpo"}
CHECKED = sorted(mid for mid, it in GRPO.items() if it.model.conformance.checked)

# Keys HF's Trainer writes into every log_history entry that are not metrics of their own.
NOT_METRICS = {"step"}


def _where(it: Loaded) -> str:
    return f"{it.path}:{it.line('snippet', 'code')}"


def logged_keys(metric_key: str, run: Run) -> list[str]:
    """A documented key as the run logs it: templates expanded with the run's reward / custom metric names."""
    if "{name}" in metric_key:
        return [metric_key.replace("{name}", n) for n in run.reward_func_names]
    if re.fullmatch(r"\{[a-z_]+\}", metric_key):  # a user metric logged through log_metric(name, value)
        return list(run.custom_metric_names)
    return [metric_key]


def _fresh(value: Any) -> Any:
    """A copy of the adapter's arguments, so that a snippet working in place cannot change the shared recordings."""
    if hasattr(value, "clone"):
        return value.clone()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


def _same(got: float | None, logged: float | None, atol: float) -> bool:
    if logged is None or (isinstance(logged, float) and math.isnan(logged)):
        return got is None or math.isnan(got)
    if got is None or math.isnan(got):
        return False
    return got == logged if atol == 0 else abs(got - logged) <= atol


def compare(it: Loaded, adapter: Adapter, runs: dict[str, Run]) -> tuple[list[str], int]:
    """Run the snippet on every log entry of every run the adapter uses; return (problems, comparisons made)."""
    snippet = it.model.snippet
    try:
        fn = compile_function(snippet.code, snippet.function, f"{it.path}#snippet")
    except Exception as exc:  # noqa: BLE001 - name the file
        return [f"{_where(it)}: the snippet does not define {snippet.function}: {type(exc).__name__}: {exc}"], 0
    signature = inspect.signature(fn)
    problems: list[str] = []
    compared = 0
    for run_name in adapter.runs:
        run = runs[run_name]
        keys = logged_keys(it.model.key, run)
        entries = [e for e in run.entries() if any(k in e for k in keys)]
        if not entries:
            problems.append(f"{_where(it)}: run '{run_name}' never logged {keys} (the adapter checks nothing there)")
            continue
        for entry in entries:
            step = entry["step"]
            for kwargs, key_or_keys in adapter.cases(run, entry):
                keys_here = [key_or_keys] if isinstance(key_or_keys, str) else list(key_or_keys)
                if not any(k in entry for k in keys_here):
                    continue
                label = key_or_keys if isinstance(key_or_keys, str) else it.model.key
                try:
                    signature.bind(**kwargs)
                except TypeError as exc:
                    problems.append(
                        f"{_where(it)}: the adapter's arguments {sorted(kwargs)} do not fit "
                        f"{snippet.function}{signature}: {exc}"
                    )
                    return problems, compared
                try:
                    got: Any = as_floats(fn(**_fresh(kwargs)))
                except Exception as exc:  # noqa: BLE001 - report which step broke the snippet
                    problems.append(
                        f"{_where(it)}: {label} step {step} (run {run_name}): snippet raised "
                        f"{type(exc).__name__}: {exc}"
                    )
                    continue
                if isinstance(key_or_keys, str):
                    if isinstance(got, list):
                        problems.append(
                            f"{_where(it)}: {label} step {step} (run {run_name}): snippet returned a "
                            f"list {got!r}, TRL logged one number {entry[label]!r}"
                        )
                        continue
                    pairs = [(key_or_keys, got)]
                else:
                    if not isinstance(got, list) or len(got) != len(keys_here):
                        problems.append(
                            f"{_where(it)}: {label} step {step} (run {run_name}): snippet returned "
                            f"{got!r}, expected one value for each of {keys_here}"
                        )
                        continue
                    pairs = list(zip(keys_here, got, strict=True))
                for key, value in pairs:
                    logged = entry.get(key)
                    compared += 1
                    if not _same(value, logged, adapter.atol):
                        diff = abs(value - logged) if value is not None and logged is not None else float("nan")
                        tol = "exactly" if adapter.atol == 0 else f"within {adapter.atol:g}"
                        problems.append(
                            f"{_where(it)}: {key} step {step} (run {run_name}): TRL logged {logged!r}, snippet "
                            f"returned {value!r} (|diff| {diff:.3g}, expected to agree {tol})"
                        )
    return problems, compared


@pytest.mark.parametrize("metric_id", CHECKED)
def test_snippet_reproduces_trl(metric_id: str, grpo_runs: dict[str, Run]) -> None:
    it = GRPO[metric_id]
    adapter = ADAPTERS.get(metric_id)
    assert adapter is not None, (
        f"{it.path}:{it.line('conformance', 'checked')}: {metric_id} is marked conformance.checked: true "
        f"but tests/conformance/adapters.py has no adapter for it"
    )
    problems, compared = compare(it, adapter, grpo_runs)
    assert not problems, "\n".join(problems)
    assert compared > 0, f"{_where(it)}: nothing was compared"


def test_every_logged_key_is_documented(grpo_runs: dict[str, Run]) -> None:
    """Every key the trainer actually logged (templates expanded) has a metric page."""
    missing: dict[str, list[str]] = {}
    for run in grpo_runs.values():
        documented = {k for it in GRPO.values() for k in logged_keys(it.model.key, run)}
        for entry in run.entries():
            for key in entry:
                if key not in NOT_METRICS and key not in documented:
                    missing.setdefault(key, []).append(f"{run.name}@{entry['step']}")
    load_errors = [str(e) for e in _LOAD_ERRORS if "/grpo/" in str(e.path)]
    assert not missing, (
        "logged by GRPOTrainer but without a metrics/grpo/*.yaml page: "
        + ", ".join(f"{k} (e.g. {v[0]})" for k, v in sorted(missing.items()))
        + ("\nYAML files that failed to load:\n" + "\n".join(load_errors) if load_errors else "")
    )


def test_checked_false_exactly_where_no_adapter() -> None:
    unchecked = {mid for mid, it in GRPO.items() if not it.model.conformance.checked}
    without_adapter = set(GRPO) - set(ADAPTERS)
    stale = set(ADAPTERS) - set(GRPO)
    problems = []
    for mid in sorted(unchecked - without_adapter):
        it = GRPO[mid]
        problems.append(f"{it.path}:{it.line('conformance', 'checked')}: checked: false, but an adapter exists")
    for mid in sorted(without_adapter - unchecked):
        it = GRPO[mid]
        problems.append(f"{it.path}:{it.line('conformance', 'checked')}: checked: true, but no adapter")
    for mid in sorted(stale):
        problems.append(f"adapters.py: adapter for {mid}, which has no metrics/grpo page")
    assert not problems, "\n".join(problems)


def test_harness_records_what_trl_used(grpo_runs: dict[str, Run]) -> None:
    """The recorded inputs are consistent with what TRL and HF logged (guards the probes, not the snippets)."""
    import torch

    for run in grpo_runs.values():
        for m in run.micro_batches:
            # the plain-forward logits belong to the same parameters as TRL's fused log-probs
            logp = torch.log_softmax(m.logits / run.args.temperature, dim=-1)
            logp = logp.gather(-1, m.completion_ids.unsqueeze(-1)).squeeze(-1)
            gap = ((logp - m.per_token_logps).abs() * m.mask).max().item()
            assert gap < 1e-5, f"{run.name}@{m.log_step}: logits and TRL's log-probs disagree by {gap}"
        for e in run.entries():
            last = run.opt_for(e["step"])[-1]
            assert last.learning_rate == e["learning_rate"], f"{run.name}@{e['step']}: learning rate probe"
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"
        for g in run.gen_batches:
            assert int(g.num_items_in_batch) == int(g.completion_lengths.sum()), f"{run.name}: num_items_in_batch"
            assert torch.equal(g.length_mask, g.completion_mask), f"{run.name}: completion mask"


def _values(run: Run, key: str) -> list[float]:
    return [e[key] for e in run.entries() if e.get(key) is not None]


def test_runs_are_not_trivial(grpo_runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    main = grpo_runs["main"]
    assert max(_values(main, "kl")) > 0, "kl stayed 0: the policy never moved away from the reference"
    assert _values(main, "kl")[0] == 0.0, "kl must be exactly 0 before the first update"
    for key in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "clip_ratio/high_max"):
        assert max(_values(main, key)) > 0, f"{key} stayed 0: no clipping happened"
    assert max(_values(main, "clip_ratio/low_min")) > 0, "clip_ratio/low_min stayed 0 in every step"
    assert any(m.old_per_token_logps_input is not None for m in main.micro_batches), "TRL never passed old log-probs"
    # a micro-batch mixes prompt groups
    assert any(len({tuple(r.tolist()) for r in m.prompt_ids}) > 1 for m in main.micro_batches)
    # rewards: some None, weights not all 1, some truncated and some terminated completions
    assert any(g.rewards_per_func.isnan().any() for g in main.gen_batches), "no reward function returned None"
    assert any((g.reward_weights != 1).any() for g in main.gen_batches)
    truncated = [t for g in main.gen_batches for t in g.is_truncated.tolist()]
    assert any(truncated) and not all(truncated), "need both truncated and terminated completions"
    assert main.custom_metric_names, "no reward function called log_metric"
    # grad_norm: HF's clipping must not have changed the gradients we recorded
    assert all(0 < g < main.args.max_grad_norm for g in _values(main, "grad_norm"))
    # the window run: several generation batches per entry, unscorable rows, an all-None reward column
    window = grpo_runs["window"]
    assert any(len(window.gen_for(e["step"])) > 1 for e in window.entries())
    assert any(g.rewards_per_func.isnan().all(dim=1).any() for g in window.gen_batches), "no unscorable completion"
    assert any(v is None for e in window.entries() for v in e.values()), "no key was logged as None"
    assert all(m.old_per_token_logps_input is None for m in window.micro_batches), "window run should be on-policy"
    # extra runs
    assert max(_values(grpo_runs["cispo"], "cispo_clip_ratio")) > 0, "cispo_clip_ratio stayed 0"
    assert any(abs(v - 1) > 1e-3 for v in _values(grpo_runs["vespo"], "vespo/phi_seq_mean")), "phi stayed 1"
    coefs = _values(grpo_runs["entropy"], "entropy_coef")
    assert len(set(coefs)) > 1, f"the adaptive entropy coefficient never moved: {coefs}"
    assert _values(grpo_runs["entropy"], "policy_loss"), "policy_loss was not logged"
