"""DPO's own checks of its recorded runs: the probes record what TRL used, and the run settings exercise the code
paths the snippets describe (a check that cannot fail is no check)."""

from __future__ import annotations

import torch
from packaging.version import Version

from ...driver import Run
from .records import MicroBatch, OptStep
from .runs import CHOSEN, REJECTED


def _values(run: Run, key: str) -> list[float]:
    return [e[key] for e in run.entries() if e.get(key) is not None]


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded rows, masks and optimizer probes agree with the data and with what HF logged."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        first = run.of(MicroBatch)[0]
        # before the first update the reference is the starting policy: same logits on the same rows
        gap = (first.logits - first.ref_logits).abs().max().item()
        assert gap < 1e-5, f"trl {release}, {run.name}: policy and reference differ by {gap} before any update"
        for m in run.of(MicroBatch):
            chosen, rejected = m.halves(m.mask)
            assert chosen.shape[0] == rejected.shape[0] == m.num_pairs
            # the mask marks whole completions: every row has at least one completion token, ending in EOS
            assert (chosen.sum(1) > 0).all() and (rejected.sum(1) > 0).all(), f"{run.name}: empty completion"
            lengths = sorted({len(c.split()) + 1 for c in CHOSEN + REJECTED})  # + EOS
            assert set(m.mask.sum(1).tolist()) <= set(lengths), f"{run.name}: mask lengths {m.mask.sum(1).tolist()}"
        after = Version(release) < Version("0.12.0")  # transformers 4.46 logs the rate after the scheduler step
        for e in run.entries():
            last = run.within(OptStep, e["step"])[-1]
            lr = last.learning_rate_after if after else last.learning_rate
            assert abs(lr - e["learning_rate"]) < 1e-12, f"trl {release}, {run.name}@{e['step']}: lr probe"
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    main = runs["main"]
    assert all(len(main.within(MicroBatch, e["step"])) == 4 for e in main.entries()), "windows of 4 micro-batches"
    margins = _values(main, "rewards/margins")
    assert margins[-1] > 0.5, f"the preference was not learned: margins {margins}"
    assert any(v < 0 for v in _values(main, "rewards/rejected")), "rewards/rejected never went negative"
    accuracies = _values(main, "rewards/accuracies")
    assert any(0 < a < 1 for a in accuracies), f"accuracies only 0 or 1: {accuracies}"
    # pairs where the chosen completion is the longer one and pairs where it is the shorter one
    longer = [len(c.split()) > len(r.split()) for c, r in zip(CHOSEN, REJECTED, strict=True)]
    assert any(longer) and not all(longer)
    assert all(0 < g < main.args.max_grad_norm for g in _values(main, "grad_norm")), "HF clipped the gradients"
    # IPO changes the sequence log-probabilities before 0.29 only: the run must have completions of several lengths
    ipo = runs["ipo"]
    assert ipo.args.loss_type in ("ipo", ["ipo"])
    assert len({int(n) for m in ipo.of(MicroBatch) for n in m.mask.sum(1)}) > 1
    if "rpo" in runs:
        assert _values(runs["rpo"], "nll_loss"), "the rpo run logged no nll_loss"
    if "multi" in runs:
        multi = runs["multi"]
        assert _values(multi, "loss")[0] > 1.0, "the sft term should dominate the first loss of the multi run"
        if Version(release) < Version("0.29.0"):
            assert _values(multi, "nll_loss"), "a `sft` loss type logs nll_loss before 0.29"
    if Version(release) >= Version("0.29.0"):
        tokens = _values(main, "num_tokens")
        assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens), f"num_tokens not increasing: {tokens}"
        acc = _values(main, "mean_token_accuracy")
        assert any(a > 0 for a in acc), "mean_token_accuracy stayed 0"
    # logits/chosen differs between a mean over the completion positions and a mean over every position
    m = main.of(MicroBatch)[0]
    chosen_logits = m.halves(m.shifted_logits)[0]
    completion_mean = chosen_logits[m.halves(m.mask)[0].bool()].mean()
    assert abs(float(completion_mean) - float(m.halves(m.logits)[0].mean())) > 1e-4
    assert torch.isfinite(m.logits).all()
