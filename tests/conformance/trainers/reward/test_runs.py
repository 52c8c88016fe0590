"""The Reward trainer's own checks of its recorded runs: the probes record what TRL used, the settings exercise the
code paths the snippets describe, and the ``eval_`` forms follow the pages' snippets on the evaluation batches."""

from __future__ import annotations

import pytest
import torch
from packaging.version import Version

from ....conftest import real_atlas
from ...driver import Adapter, Run, compare
from .adapters import ADAPTERS, EVAL_ONLY
from .records import EvalBatch, MicroBatch, OptStep

PAIR_KEYS = ["accuracy", "margin", "min_reward", "mean_reward", "max_reward"]


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded inputs agree with what TRL and HF used (guards the probes, not the snippets)."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        for step in {m.log_step for m in run.of(MicroBatch)}:
            mbs = [m for m in run.of(MicroBatch) if m.log_step == step]
            assert all(m.gradient_accumulation_steps == len(mbs) for m in mbs), f"{run.name}@{step}: accumulation"
        for m in run.of(MicroBatch):
            assert m.rewards_chosen.shape == m.rewards_rejected.shape, f"{run.name}: chosen and rejected differ"
            assert m.margin is not None and m.margin.shape == m.rewards_chosen.shape, f"{run.name}: margin column"
            assert m.attention_mask.shape[0] == 2 * m.rewards_chosen.shape[0], f"{run.name}: not two rows per pair"
        for e in run.entries():
            last = run.within(OptStep, e["step"])[-1]
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"
            read = last.lr_next if Version(run.transformers_version) < Version("4.51.0") else last.lr_used
            assert read == e["learning_rate"], f"{run.name}@{e['step']}: learning-rate probe"


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings exercise what the snippets describe: a tie, margins, windows of several steps, mid-run evals."""
    main = runs["main"]
    mbs = main.of(MicroBatch)
    assert any(bool((m.rewards_chosen == m.rewards_rejected).any()) for m in mbs), "no tied pair in training"
    assert any(bool((b.rewards_chosen == b.rewards_rejected).any()) for b in main.of(EvalBatch)), "no tied eval pair"
    assert any(bool((m.margin != 0).any()) for m in mbs), "every margin is zero"
    assert main.args.center_rewards_coefficient, "the centring term is off"
    assert all(len(main.window(e["step"])) > 1 for e in main.entries())
    assert len(main.facts["eval_log"]) >= 2, "no evaluation in the middle of training"
    if "accuracy" in main.entries()[0]:
        accuracies = [e["accuracy"] for e in main.entries()]
        assert len(set(accuracies)) > 1 and max(accuracies) > 0, f"accuracy never moved: {accuracies}"
        margins = [e["margin"] for e in main.entries()]
        assert min(margins) < 0 < max(margins), f"the margin never changed sign: {margins}"
    assert len({e["learning_rate"] for e in main.entries()}) > 1, "the learning rate never changed"


def _eval_run(run: Run) -> Run:
    """The run's evaluation entries as a run of their own: each key with and without the `eval_` prefix (a page of
    an evaluation-only key is logged as `eval_accuracy`), the evaluation batches as its micro-batches (each
    evaluation's batches carry its step)."""
    entries = [{**e, **{k.removeprefix("eval_"): v for k, v in e.items()}} for e in run.facts["eval_log"]]
    return Run(
        name=run.name,
        trl_version=run.trl_version,
        transformers_version=run.transformers_version,
        args=run.args,
        log_history=entries,
        records={"MicroBatch": list(run.of(EvalBatch))},
    )


def _eval_adapter(release: str, key: str) -> Adapter | None:
    return EVAL_ONLY.get(release, {}).get(f"reward/{key}") or ADAPTERS[release].get(f"reward/{key}")


@pytest.mark.parametrize("key", PAIR_KEYS)
def test_eval_forms_follow_the_same_snippet(release: str, runs: dict[str, Run], key: str) -> None:
    """`eval_<key>` is the page's snippet (for that release) over the evaluation batches of that evaluation; on the
    0.11 line that is the pooled, tie-friendly `eval_accuracy` of `compute_accuracy`."""
    adapter = _eval_adapter(release, key)
    if adapter is None:
        assert all(f"eval_{key}" not in e for r in runs.values() for e in r.facts["eval_log"]), f"eval_{key} logged"
        pytest.skip(f"trl {release} does not log eval_{key}")
    edition = next(e for e in real_atlas().editions if e.release == release)
    res = edition.metric(f"reward/{key}")
    evals = {name: _eval_run(run) for name, run in runs.items()}
    out = compare(res, release, adapter, evals)
    assert not out.errors and not out.mismatches, "\n".join(out.errors + out.mismatches)
    assert out.compared >= 2


def test_eval_accuracy_counts_a_tie_as_right_only_before_0_13(release: str, runs: dict[str, Run]) -> None:
    """The tie in the evaluation set is right for `compute_accuracy` (< 0.13) and wrong per batch (>= 0.24)."""
    for run in runs.values():
        for e in run.facts["eval_log"]:
            batches = [b for b in run.of(EvalBatch) if b.log_step == e["step"]]
            chosen = torch.cat([b.rewards_chosen for b in batches])
            rejected = torch.cat([b.rewards_rejected for b in batches])
            if Version(release) < Version("0.13.0"):
                expected = float((chosen >= rejected).float().mean())
            else:
                expected = sum(float((b.rewards_chosen > b.rewards_rejected).float().mean()) for b in batches)
                expected /= len(batches)
            assert abs(e["eval_accuracy"] - expected) < 1e-6, f"{run.name}@{e['step']}: eval_accuracy {expected}"


def test_eval_loss_and_num_tokens(release: str, runs: dict[str, Run]) -> None:
    """`eval_loss` is HF's row-weighted mean of each evaluation batch's loss (the training formula, without the
    accumulation division); `eval_num_tokens` is the training total at the evaluation."""
    coef = runs["main"].args.center_rewards_coefficient or 0.0
    for run in runs.values():
        for e in run.facts["eval_log"]:
            batches = [b for b in run.of(EvalBatch) if b.log_step == e["step"]]
            rows = [b.rewards_chosen.shape[0] for b in batches]
            own = []
            for b in batches:
                gap = b.rewards_chosen - b.rewards_rejected
                if Version(release) < Version("0.24.0"):  # [B, 1] scores minus a [B] margin: a [B, B] matrix
                    value = -torch.nn.functional.logsigmoid(gap.unsqueeze(-1) - b.margin).mean()
                else:
                    value = -torch.nn.functional.logsigmoid(gap - b.margin).mean()
                value = value + coef * torch.mean((b.rewards_chosen + b.rewards_rejected) ** 2)
                assert abs(float(value) - float(b.loss)) < 1e-5, f"{run.name}@{e['step']}: batch loss"
                own.append(float(value))
            expected = sum(m * n for m, n in zip(own, rows, strict=True)) / sum(rows)
            assert abs(e["eval_loss"] - expected) < 1e-4, f"{run.name}@{e['step']}: eval_loss, expected {expected}"
            if "eval_num_tokens" in e:
                trained = sum(int(m.attention_mask.sum()) for m in run.of(MicroBatch) if m.log_step <= e["step"])
                assert e["eval_num_tokens"] == trained, f"{run.name}@{e['step']}: eval_num_tokens"
