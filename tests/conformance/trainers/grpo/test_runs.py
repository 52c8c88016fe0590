"""GRPO's own checks of its recorded runs: the probes record what TRL used, and the run settings exercise the code
paths the snippets describe (a check that cannot fail is no check)."""

from __future__ import annotations

import torch
from packaging.version import Version

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded inputs are consistent with what TRL and HF logged (guards the probes, not the snippets)."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        for m in run.of(MicroBatch):
            # the plain-forward logits belong to the same parameters as TRL's log-probs and entropies
            logp = torch.log_softmax(m.logits / run.args.temperature, dim=-1)
            ent = -(logp.exp() * logp).sum(-1)
            logp = logp.gather(-1, m.completion_ids.unsqueeze(-1)).squeeze(-1)
            gap = ((logp - m.per_token_logps).abs() * m.mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's log-probs differ by {gap}"
            gap = ((ent - m.entropies).abs() * m.mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's entropies differ by {gap}"
        for e in run.entries():
            last = run.within(OptStep, e["step"])[-1]
            assert last.learning_rate == e["learning_rate"], f"trl {release}, {run.name}@{e['step']}: lr probe"
            assert last.micro_steps_done / last.steps_in_epoch == e["epoch"], f"{run.name}@{e['step']}: epoch probe"
        for g in run.of(GenBatch):
            assert int(g.num_items_in_batch) == int(g.completion_lengths.sum()), f"{run.name}: num_items_in_batch"
            assert torch.equal(g.length_mask, g.completion_mask), f"{run.name}: completion mask"
            assert len(g.completions) == len(g.completion_ids), f"{run.name}: completions"


def _values(run: Run, key: str) -> list[float]:
    return [e[key] for e in run.entries() if e.get(key) is not None and e[key] == e[key]]


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    main = runs["main"]
    assert max(_values(main, "kl")) > 0, "kl stayed 0: the policy never moved away from the reference"
    assert _values(main, "kl")[0] == 0.0, "kl must be exactly 0 before the first update"
    for key in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "clip_ratio/high_max"):
        assert max(_values(main, key)) > 0, f"{key} stayed 0: no clipping happened"
    assert max(_values(main, "clip_ratio/low_min")) > 0, "clip_ratio/low_min stayed 0 in every step"
    assert any(m.old_per_token_logps_input is not None for m in main.of(MicroBatch)), "TRL never passed old log-probs"
    assert main.args.steps_per_generation != main.args.gradient_accumulation_steps  # the 1.9.1 loss rescale shows
    # a micro-batch mixes prompt groups
    assert any(len({tuple(r.tolist()) for r in m.prompt_ids}) > 1 for m in main.of(MicroBatch))
    # rewards: some None, weights not all 1, some truncated and some terminated completions
    assert any(g.rewards_per_func.isnan().any() for g in main.of(GenBatch)), "no reward function returned None"
    assert any((g.reward_weights != 1).any() for g in main.of(GenBatch))
    truncated = [t for g in main.of(GenBatch) for t in g.is_truncated.tolist()]
    assert any(truncated) and not all(truncated), "need both truncated and terminated completions"
    # groups of different spread, so that the mean of the group stds is not the std of the whole batch
    spreads = []
    for g in main.of(GenBatch):
        rewards = (g.rewards_per_func * g.reward_weights).nansum(1)
        group_std = rewards.view(-1, g.num_generations).std(1)
        spreads.append(float(group_std.max() - group_std.min()))
        assert abs(group_std.mean() - rewards.std()) > 1e-3, f"group and batch std agree at step {g.log_step}"
    assert max(spreads) > 0.1, f"the groups of every generation batch have about the same spread: {spreads}"
    assert all(0 < g < main.args.max_grad_norm for g in _values(main, "grad_norm")), "HF clipped the gradients"
    # the window run: several generation batches per entry, unscorable rows, an all-None reward column
    window = runs["window"]
    assert any(len(window.within(GenBatch, e["step"])) > 1 for e in window.entries())
    assert any(g.rewards_per_func.isnan().all(dim=1).any() for g in window.of(GenBatch)), "no unscorable completion"
    assert any(g.rewards_per_func.isnan().all(dim=0).any() for g in window.of(GenBatch)), "no all-None column"
    unscorable_groups = [
        g.rewards_per_func.isnan().all(1).view(-1, g.num_generations).all(1) for g in window.of(GenBatch)
    ]
    assert any(u.any() for u in unscorable_groups), "no group of only unscorable completions"
    assert any(v is None or v != v for e in window.entries() for v in e.values()), "no key was logged None / NaN"
    assert all(m.old_per_token_logps_input is None for m in window.of(MicroBatch)), "window run should be on-policy"
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
        assert main.templates["log_metric_name"], "no reward function called log_metric"
