"""KTO's own checks of its recorded runs: the probes see what TRL computed from, the run settings reach the code paths
the pages describe (a check that cannot fail is no check), and the accumulators the docs of 0.16-1.7 list as logged
metrics never reach the logs."""

from __future__ import annotations

import torch

from ...driver import Run
from .records import MicroBatch


def _kto_micro_batch_loss(m: MicroBatch, run: Run) -> float:
    """The loss of one micro-batch from the probe's tensors, as KTO computes it."""
    a = run.args
    r = m.logps - m.ref_logps
    if a.loss_type == "kto":
        z0 = (m.kl_logps - m.kl_ref_logps).mean().clamp(min=0)
        chosen, rejected = 1 - torch.sigmoid(a.beta * (r - z0)), 1 - torch.sigmoid(a.beta * (z0 - r))
    else:
        chosen, rejected = 1 - torch.sigmoid(a.beta * r), torch.sigmoid(a.beta * r)
    terms = torch.cat([a.desirable_weight * chosen[m.label], a.undesirable_weight * rejected[~m.label]])
    return terms.nanmean().item()


def test_probes_see_what_trl_computed_from(release: str, runs: dict[str, Run]) -> None:
    """The loss TRL returned for every micro-batch equals the KTO loss of the probe's tensors: the probe's forward
    passes used the same parameters, rows, masks and mismatched pairs as TRL's; and each optimizer step holds
    `gradient_accumulation_steps` micro-batches."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        mbs = [m for m in run.of(MicroBatch) if m.training]
        assert len(mbs) == run.args.max_steps * run.args.gradient_accumulation_steps, f"{run.name}: micro-batches"
        for m in mbs:
            mine = _kto_micro_batch_loss(m, run)
            assert abs(mine - m.loss) < 1e-5, f"{run.name}@{m.log_step}: TRL loss {m.loss}, probe tensors give {mine}"


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings reach the code paths the pages describe."""
    main, window, apo = runs["main"], runs["window"], runs["apo"]
    mbs = [m for m in main.of(MicroBatch) if m.training]
    # a micro-batch without any undesirable row: the rejected keys and the margin skip it
    assert any(bool(m.label.all()) for m in mbs), "no single-class micro-batch"
    # windows whose micro-batches hold different class counts: pooled and per-micro-batch means differ
    counts = {(m.log_step, int(m.label.sum())) for m in mbs}
    assert any(len({c for s, c in counts if s == step}) > 1 for step, _ in counts), "equal class counts everywhere"
    assert window.args.logging_steps > 1, "no window of several optimizer steps"
    # the reference point: floored at 0 somewhere, positive somewhere else; exactly 0 under apo_zero_unpaired
    kl = [e["kl"] for run in (main, window) for e in run.entries()]
    assert min(kl) == 0.0 and max(kl) > 0.01, f"kl never both floored and positive: {kl}"
    assert all(e["kl"] == 0.0 for e in apo.entries()), "apo_zero_unpaired logged a non-zero kl"
    raw = [(m.kl_logps - m.kl_ref_logps).mean().item() for run in (main, window) for m in run.of(MicroBatch)]
    assert min(raw) < 0 < max(raw), "the mismatched-pair estimate never changed sign before the floor"
    # the policy moved away from the reference: the rewards leave 0 after the first step
    rewards = [e[k] for e in main.entries()[1:] for k in ("rewards/chosen", "rewards/rejected")]
    assert min(abs(r) for r in rewards) > 1e-3, f"rewards do not move: {rewards}"


def test_accumulators_never_reach_the_logs(runs: dict[str, Run]) -> None:
    """Up to 1.5 TRL stores `rewards/chosen_sum`, `count/chosen` and the like per micro-batch and turns them into
    means in `log`; from 1.6 they do not exist. Either way no log entry holds them."""
    for run in runs.values():
        for entry in run.entries():
            leaked = sorted(k for k in entry if k.endswith("_sum") or k.startswith("count/"))
            assert not leaked, f"{run.name}@{entry['step']}: {leaked}"
