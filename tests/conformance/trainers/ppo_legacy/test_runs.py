"""Legacy PPO's own checks of its recorded runs: the probes record what TRL used, and the run settings exercise the
code paths the pages describe (a check that cannot fail is no check)."""

from __future__ import annotations

import torch

from ...driver import Run
from .adapters import gathered
from .records import GameLog, KLUpdate, MiniBatch, Rollout


def response_mask(r: Rollout) -> torch.Tensor:
    """[B, L-1] mask rebuilt from the lengths: position t is 1 when token t+1 is a response token."""
    mask = torch.zeros_like(r.masks)
    for i, (q, resp) in enumerate(zip(r.queries, r.responses, strict=True)):
        start = len(q) - 1  # position t scores token t + 1; left padding shifts everything right
        if r.attention_mask[i, 0] == 0:
            start += int(r.attention_mask[i].nonzero()[0])
        mask[i, start:start + len(resp)] = 1
    return mask


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        entries = {e["step"]: e for e in run.entries()}
        assert sorted(entries) == list(range(1, len(entries) + 1)), f"{run.name}: one entry per step() call"
        for r in run.of(Rollout):
            at = f"trl {release}, {run.name}@{r.log_step}"
            # the kept logits are the ones TRL's log-probs came from
            assert (gathered(r.logits, r.input_ids) - r.logprobs).abs().max() < 1e-5, at
            assert (gathered(r.ref_logits, r.input_ids) - r.ref_logprobs).abs().max() < 1e-5, at
            assert torch.equal(response_mask(r), r.masks), f"{at}: TRL's response mask"
            # shaped rewards: -kl_coef * kl everywhere, plus the score on the last response position
            last = torch.tensor([int(m.nonzero()[-1]) for m in r.masks])
            expected = -r.kl_coef * r.kls
            expected[torch.arange(len(last)), last] += r.scores
            assert (expected - r.rewards).abs().max() < 1e-6, f"{at}: rewards"
            assert entries[r.log_step]["objective/kl_coef"] == r.kl_coef, f"{at}: kl_coef probe"
        for u in run.of(KLUpdate):
            assert u.current == entries[u.log_step]["objective/kl"], f"{run.name}@{u.log_step}: controller input"
            if u.log_step + 1 in entries:  # the next call logs the updated coefficient
                assert entries[u.log_step + 1]["objective/kl_coef"] == u.value_after, f"{run.name}@{u.log_step}"
        for g in run.of(GameLog):
            assert g.columns == ["query", "response", "reward"], f"{run.name}: game_log columns {g.columns}"
            assert len(g.rows) == int(run.args.batch_size), f"{run.name}: one row per sample"


def _avg_ratio(m: MiniBatch) -> float:
    return float((torch.exp(m.logprobs - m.old_logprobs) * m.mask).sum() / m.mask.sum())


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    main, full, mse, abs_ = runs["main"], runs["full"], runs["mse"], runs["abs"]
    values = {name: [e for e in run.entries()] for name, run in runs.items()}
    # the reference is a copy of the initial policy: exactly 0 at the first call, then both signs of k1
    assert all(es[0]["objective/kl"] == 0.0 for es in values.values())
    kls = [e["objective/kl"] for e in values["main"]]
    assert min(kls) < 0 < max(kls), f"main: objective/kl never changes sign {kls}"
    assert any(e["ppo/policy/policykl"] < 0 for es in values.values() for e in es), "policykl never negative"
    # both clips bind, the critic is worse than a constant somewhere
    assert all(e["ppo/policy/clipfrac"] > 0 for e in values["main"]), "no policy clipping in main"
    assert any(e["ppo/val/clipfrac"] > 0 for e in values["main"]), "no value clipping in main"
    assert any(e["ppo/val/var_explained"] < 0 for es in values.values() for e in es)
    # the coefficient moves (adaptive) or not (fixed); the learning rate decays in main
    assert len({e["objective/kl_coef"] for e in values["main"]}) == len(values["main"])
    assert len({e["objective/kl_coef"] for e in values["full"]}) == 1
    assert len({e["ppo/learning_rate"] for e in values["main"]}) == len(values["main"])
    # score_clip: step() sees other scores than log_stats()
    assert any(not torch.equal(r.raw_scores, r.scores) for r in full.of(Rollout))
    assert any(e["ppo/mean_scores"] != e["env/reward_mean"] for e in values["full"])
    # a skipped mini-batch (ratio_threshold), epochs cut by early stopping, left padding
    assert any(_avg_ratio(m) > float(mse.args.ratio_threshold) for m in mse.of(MiniBatch)), "nothing skipped"
    per_step = [len(abs_.within(MiniBatch, e["step"])) for e in values["abs"]]
    full_count = int(abs_.args.ppo_epochs) * int(abs_.args.batch_size) // int(abs_.args.mini_batch_size)
    assert min(per_step) < full_count, f"early stopping never cut the epochs short: {per_step}"
    assert any(bool((r.attention_mask[:, 0] == 0).any()) for r in mse.of(Rollout)), "no left padding"
    # queries and responses of several lengths
    for run in (main,):
        lengths = {len(x) for r in run.of(Rollout) for x in r.responses}
        assert len(lengths) > 2, f"{run.name}: response lengths {lengths}"
        assert len({len(q) for r in run.of(Rollout) for q in r.queries}) > 2
