"""SFT's own checks of its recorded runs: the probes record what TRL used, the settings exercise the code paths the
snippets describe, and the ``eval_`` forms follow the same snippets on the evaluation batches."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from packaging.version import Version

from ....conftest import real_atlas
from ...driver import Run, compare
from .adapters import ADAPTERS
from .records import EvalBatch, MicroBatch, OptStep


def _labelled(batch: MicroBatch | EvalBatch) -> int:
    return int((batch.labels[:, 1:] != -100).sum())


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded inputs agree with what TRL and HF used (guards the probes, not the snippets)."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        for step in {m.log_step for m in run.of(MicroBatch)}:
            mbs = [m for m in run.of(MicroBatch) if m.log_step == step]
            # HF's num_items_in_batch is the labelled tokens of the whole optimizer step
            expected = sum(_labelled(m) for m in mbs)
            assert all(int(m.num_items_in_batch) == expected for m in mbs), f"{run.name}@{step}: num_items_in_batch"
        for m in run.of(MicroBatch):
            # padding is never labelled, and every label is the token it sits on
            assert bool(((m.labels != -100) <= (m.attention_mask == 1)).all()), f"{run.name}: a padding label"
            on = m.labels != -100
            assert torch.equal(m.labels[on], m.input_ids[on]), f"{run.name}: labels are not the input ids"
        for e in run.entries():
            last = run.within(OptStep, e["step"])[-1]
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"
            read = last.lr_next if Version(run.transformers_version) < Version("4.51.0") else last.lr_used
            assert read == e["learning_rate"], f"{run.name}@{e['step']}: learning-rate probe"


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings exercise what the snippets describe."""
    main = runs["main"]
    mbs = main.of(MicroBatch)
    # the prompt is masked: some real tokens carry no label (what tells the 0.26 entropy apart)
    assert any(((m.attention_mask == 1) & (m.labels == -100))[:, 1:].any() for m in mbs), "no masked prompt token"
    # micro-batches of one step hold different label counts, so a step's token mean is not a mean of means
    assert any(len({_labelled(m) for m in mbs if m.log_step == s}) > 1 for s in {m.log_step for m in mbs})
    # log entries cover several optimizer steps
    assert all(len(main.window(e["step"])) > 1 for e in main.entries())
    assert len(main.facts["eval_log"]) >= 2, "no evaluation in the middle of training"
    if "mean_token_accuracy" in main.entries()[0]:
        accuracies = [e["mean_token_accuracy"] for e in main.entries()]
        assert len(set(accuracies)) > 1 and max(accuracies) > 0, f"accuracy never moved: {accuracies}"
    assert len({e["learning_rate"] for e in main.entries()}) > 1, "the learning rate never changed"


def _eval_run(run: Run) -> Run:
    """The run's evaluation entries as a run of their own: keys without the `eval_` prefix, the evaluation batches
    as its micro-batches (each evaluation's batches carry its step)."""
    entries = [{k.removeprefix("eval_"): v for k, v in e.items()} for e in run.facts["eval_log"]]
    return Run(
        name=run.name,
        trl_version=run.trl_version,
        transformers_version=run.transformers_version,
        args=run.args,
        log_history=entries,
        records={"MicroBatch": list(run.of(EvalBatch))},
    )


@pytest.mark.parametrize("key", ["mean_token_accuracy", "entropy"])
def test_eval_forms_follow_the_same_snippet(release: str, runs: dict[str, Run], key: str) -> None:
    """`eval_<key>` is the page's snippet over the evaluation batches of that evaluation."""
    adapter = ADAPTERS[release].get(f"sft/{key}")
    if adapter is None:
        pytest.skip(f"trl {release} does not log {key}")
    edition = next(e for e in real_atlas().editions if e.release == release)
    res = edition.metric(f"sft/{key}")
    evals = {name: _eval_run(run) for name, run in runs.items()}
    out = compare(res, release, adapter, evals)
    assert not out.errors and not out.mismatches, "\n".join(out.errors + out.mismatches)
    assert out.compared >= 2


def test_eval_num_tokens_and_loss(release: str, runs: dict[str, Run]) -> None:
    """`eval_num_tokens` is the training total at the evaluation; `eval_loss` is HF's row-weighted mean of each
    evaluation batch's own token mean."""
    for run in runs.values():
        for e in run.facts["eval_log"]:
            batches: list[Any] = [b for b in run.of(EvalBatch) if b.log_step == e["step"]]
            rows = [b.labels.shape[0] for b in batches]
            own_means = []
            for b in batches:
                logp = torch.log_softmax(b.logits[:, :-1].float(), dim=-1)
                y = b.labels[:, 1:]
                on = y != -100
                nll = -logp.gather(-1, y.clamp(min=0).unsqueeze(-1)).squeeze(-1)
                own_means.append(float((nll * on).sum() / on.sum()))
            expected = sum(m * n for m, n in zip(own_means, rows, strict=True)) / sum(rows)
            assert abs(e["eval_loss"] - expected) < 1e-5, f"{run.name}@{e['step']}: eval_loss, expected {expected}"
            if "eval_num_tokens" in e:
                trained = sum(int(m.attention_mask.sum()) for m in run.of(MicroBatch) if m.log_step <= e["step"])
                assert e["eval_num_tokens"] == trained, f"{run.name}@{e['step']}: eval_num_tokens"
