"""RLOO's own checks of its recorded runs: the probes record what TRL used (the advantages TRL handed to the loss are
rebuilt here from the recorded scores and log-probs with the leave-one-out baseline), and the run settings exercise
the code paths the snippets describe (a check that cannot fail is no check)."""

from __future__ import annotations

import torch
from packaging.version import Version

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep, PPOMicroBatch, Rollout
from .runs import LEGACY_CONFIGS

UNSCORABLE_DROPPED = Version("1.6.0")  # from here a completion no function scored leaves its siblings' baselines


def leave_one_out_advantages(run: Run, g: GenBatch, release: str) -> torch.Tensor:
    """The advantages of one generation batch, rebuilt independently of TRL's code path."""
    a = run.args
    w = g.rewards_per_func * g.reward_weights.unsqueeze(0)
    rewards = torch.nan_to_num(w).sum(1)
    unscorable = g.rewards_per_func.isnan().all(1)
    new = Version(release) >= UNSCORABLE_DROPPED
    if new:
        rewards[unscorable] = float("nan")
    if a.reward_clip_range is not None:
        rewards = rewards.clamp(*[float(x) for x in a.reward_clip_range])
    if float(a.beta) != 0.0:
        rewards = rewards - float(a.beta) * ((g.old_per_token_logps - g.ref_per_token_logps) * g.completion_mask).sum(1)
    k = g.num_generations
    out = torch.zeros_like(rewards)
    for start in range(0, len(rewards), k):
        group = rewards[start : start + k]
        for i in range(k):
            others = torch.cat([group[:i], group[i + 1 :]])
            others = others[~others.isnan()]
            out[start + i] = group[i] - others.mean() if len(others) else float("nan")
    if a.normalize_advantages:
        valid = out[~out.isnan()]
        out = (out - valid.mean()) / (valid.std() + 1e-4)
    return torch.nan_to_num(out, nan=0.0)


def _legacy(runs: dict[str, Run]) -> bool:
    """The PPO-style trainer (TRL 0.9.2 to 0.21) was recorded: its runs have other records and other checks."""
    return set(runs) <= set(LEGACY_CONFIGS)


def _check_legacy_harness(release: str, runs: dict[str, Run]) -> None:
    """One rollout and every optimisation cell per update; the counters TRL logged agree with the probes."""
    for run in runs.values():
        a = run.args
        cells = int(a.num_ppo_epochs) * int(a.num_mini_batches) * int(a.gradient_accumulation_steps)
        for e in run.entries():
            (r,) = run.within(Rollout, e["step"])
            assert r.episode == e["episode"], f"trl {release}, {run.name}@{e['step']}: episode probe"
            assert r.lr == e["lr"], f"trl {release}, {run.name}@{e['step']}: lr probe"
            mbs = run.within(PPOMicroBatch, e["step"])
            assert len(mbs) == cells, f"trl {release}, {run.name}@{e['step']}: {len(mbs)} cells, not {cells}"
            # each PPO epoch visits every rollout row once
            for epoch in range(int(a.num_ppo_epochs)):
                rows = sorted(i for m in mbs if m.ppo_epoch == epoch for i in m.indices)
                assert rows == list(range(r.queries.shape[0])), f"{run.name}@{e['step']}: epoch {epoch} rows"
            # the leave-one-out advantages of a prompt's rloo_k samples add up to 0
            assert r.advantages.view(r.rloo_k, -1).sum(0).abs().max() < 1e-4


def _check_legacy_runs(runs: dict[str, Run]) -> None:
    main, one = runs["legacy_main"], runs["legacy_one_cell"]
    assert max(_values(main, "objective/kl")) > 0, "objective/kl stayed 0: the policy never left the reference"
    assert max(_values(main, "policy/clipfrac_avg")) > 0, "nothing was clipped"
    assert all(v == v for v in (e["val/ratio_var"] for e in main.entries())), "main run: one cell only"
    assert all(v != v for v in (e["val/ratio_var"] for e in one.entries())), "one-cell run: val/ratio_var not NaN"
    rollouts = main.of(Rollout)
    assert any(r.padding_mask.any() for r in rollouts), "stop_token='eos' made no padding"
    assert any((~r.contain_eos_token).any() for r in rollouts), "the missing-EOS penalty never applied"
    assert any(r.contain_eos_token.any() for r in rollouts), "no response ended with EOS"
    # without a stop token a response can hold several EOS, so val/num_eos_tokens counts tokens, not responses
    assert any(((r.responses == r.eos_token_id).sum(1) > 1).any() for r in one.of(Rollout)), "no repeated EOS"
    # a micro-batch holds parts of prompt groups, so its advantages do not cancel
    assert any(abs(float(main.within(Rollout, e["step"])[0].advantages[m.indices].sum())) > 1e-3
               for e in main.entries() for m in main.within(PPOMicroBatch, e["step"]))
    assert any(e["lr"] == 0.0 for e in one.entries()), "the warm-up update did not log lr 0"


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded inputs agree with what TRL used and logged (guards the probes, not the snippets)."""
    if _legacy(runs):
        _check_legacy_harness(release, runs)
        return
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        for g in run.of(GenBatch):
            want = leave_one_out_advantages(run, g, release)
            gap = (want - g.advantages).abs().max().item()
            assert gap < 1e-4, f"trl {release}, {run.name}@{g.log_step}: leave-one-out advantages differ by {gap}"
        for m in run.of(MicroBatch):
            logp = torch.log_softmax(m.logits / run.args.temperature, dim=-1)
            ent = -(logp.exp() * logp).sum(-1)
            logp = logp.gather(-1, m.completion_ids.unsqueeze(-1)).squeeze(-1)
            mask = m.completion_mask.float()
            gap = ((logp - m.per_token_logps).abs() * mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's log-probs differ by {gap}"
            gap = ((ent - m.entropies).abs() * mask).max().item()
            assert gap < 1e-5, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's entropies differ by {gap}"
        for e in run.entries():
            last = run.within(OptStep, e["step"])[-1]
            assert last.learning_rate == e["learning_rate"], f"trl {release}, {run.name}@{e['step']}: lr probe"


def _values(run: Run, key: str) -> list[float]:
    return [e[key] for e in run.entries() if e.get(key) is not None and e[key] == e[key]]


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    if _legacy(runs):
        _check_legacy_runs(runs)
        return
    main = runs["main"]
    assert max(_values(main, "kl")) > 0, "kl stayed 0: the policy never moved away from the reference"
    for key in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean"):
        assert max(_values(main, key)) > 0, f"{key} stayed 0: no clipping happened"
    # the KL penalty moves the advantages: without it they would differ
    g = main.of(GenBatch)[-1]
    raw = (torch.nan_to_num(g.rewards_per_func) * g.reward_weights).sum(1).view(-1, g.num_generations)
    no_kl = (raw - (raw.sum(1, keepdim=True) - raw) / (g.num_generations - 1)).flatten()
    assert (no_kl - g.advantages).abs().max() > 1e-3, "beta did not change the advantages"
    # leave-one-out advantages of a group add up to 0 when nothing is normalised or unscorable
    for g in main.of(GenBatch):
        assert g.advantages.view(-1, g.num_generations).sum(1).abs().max() < 1e-4
    # a micro-batch mixes prompt groups, and a window holds several generation batches
    assert any(len(set(m.advantages.tolist())) > 1 for m in main.of(MicroBatch))
    window = runs["window"]
    assert any(len(window.within(GenBatch, e["step"])) > 1 for e in window.entries())
    # rewards: weights not all 1, unscorable rows, an all-None column, truncated and finished completions
    assert any((g.reward_weights != 1).any() for g in window.of(GenBatch))
    assert any(g.rewards_per_func.isnan().all(dim=1).any() for g in window.of(GenBatch)), "no unscorable completion"
    assert any(g.rewards_per_func.isnan().all(dim=0).any() for g in window.of(GenBatch)), "no all-None column"
    truncated = [t for r in runs.values() for g in r.of(GenBatch) for t in g.is_truncated.tolist()]
    assert any(truncated) and not all(truncated), "need both truncated and terminated completions"
    norms = _values(main, "grad_norm")  # 0 where every advantage of a step is 0
    assert max(norms) > 0 and all(v < main.args.max_grad_norm for v in norms), "HF clipped the gradients"
