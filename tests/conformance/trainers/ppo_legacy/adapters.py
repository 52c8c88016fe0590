"""Adapters: how each legacy PPO page's snippet is fed from a recorded run (``runs.py``), for trl 0.11.4.

Every ``step()`` call makes one log entry (``step`` = its number), so each adapter reads the records of that call:
the ``Rollout`` (both forward passes, the shaped rewards, the advantages), the ``MiniBatch`` list (one per call of
``loss()``, over every PPO epoch, in order), the ``KLUpdate`` and the ``Timing`` of the fake clock. Rollout-side
snippets take ``[B, T]`` tensors of the batch; update-side snippets take one tensor per mini-batch; histogram
snippets return the array flattened, which the driver compares element by element. All runs use one process, so
the ``process`` arguments some snippets offer keep their default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import MiniBatch, Rollout, Timing

RUNS = ("main", "full", "mse", "abs")
ATOL = 1e-6  # float32 arithmetic done in another order than TRL's
RATIO_ATOL = 2e-5  # var_explained divides two float32 means: |values| of 10-60 in these tiny runs
TIME_ATOL = 1e-9  # the fake clock's costs are powers of two: their sums are exact


def rollout(run: Run, entry: dict[str, Any]) -> Rollout:
    (r,) = run.within(Rollout, entry["step"])
    return r


def minibatches(run: Run, entry: dict[str, Any]) -> list[MiniBatch]:
    mbs = run.within(MiniBatch, entry["step"])
    assert mbs, f"{run.name}: no mini-batch recorded for step {entry['step']}"
    return mbs


def gathered(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """Log-probability of each next token: position t of [B, L-1] holds log p(token t+1)."""
    return torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def kl_inputs(run: Run, r: Rollout) -> dict[str, Any]:
    """What TRL's per-token KL reads: gathered log-probs, or whole log-softmax rows for kl_penalty="full"."""
    if run.args.kl_penalty == "full":
        logprobs, ref_logprobs = torch.log_softmax(r.logits, -1), torch.log_softmax(r.ref_logits, -1)
    else:
        logprobs, ref_logprobs = r.logprobs, r.ref_logprobs
    return dict(logprobs=logprobs, ref_logprobs=ref_logprobs, mask=r.masks, kl_penalty=run.args.kl_penalty)


def update_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """The tensors of every mini-batch update of the step, and the settings loss() reads."""
    mbs = minibatches(run, entry)
    return dict(
        old_logprobs=[m.old_logprobs for m in mbs],
        logprobs=[m.logprobs for m in mbs],
        logits=[m.logits for m in mbs],
        advantages=[m.advantages for m in mbs],
        values=[m.values for m in mbs],
        vpreds=[m.vpreds for m in mbs],
        returns=[m.returns for m in mbs],
        mask=[m.mask for m in mbs],
        cliprange=float(run.args.cliprange),
        cliprange_value=float(run.args.cliprange_value),
        vf_coef=float(run.args.vf_coef),
        ratio_threshold=float(run.args.ratio_threshold),
    )


def one(key: str, inputs: Callable[[Run, dict[str, Any]], dict[str, Any]]) -> Callable[[Run, dict], list[Case]]:
    return lambda run, entry: [(inputs(run, entry), key)]


# --------------------------------------------------------------------------------------------------------------------
# Rollout side: one step() call's batch
# --------------------------------------------------------------------------------------------------------------------


def _kl(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    return kl_inputs(run, rollout(run, entry))


def _non_score(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r = rollout(run, entry)
    return {**kl_inputs(run, r), "kl_coef": r.kl_coef}


def _sampled(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r = rollout(run, entry)
    return dict(logits=r.logits, ref_logits=r.ref_logits, input_ids=r.input_ids, logprobs=r.logprobs, mask=r.masks)


def _kl_coef(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    earlier = [e["objective/kl"] for e in run.entries() if e["step"] < entry["step"]]
    return dict(
        previous_kls=torch.tensor(earlier, dtype=torch.float64),
        init_kl_coef=float(run.args.init_kl_coef),
        target=float(run.args.target),
        horizon=float(run.args.horizon),
        batch_size=int(run.args.batch_size),
        num_processes=int(run.facts["num_processes"]),
        adap_kl_ctrl=bool(run.args.adap_kl_ctrl),
    )


def _scores(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    return dict(scores=rollout(run, entry).raw_scores, score_clip=run.args.score_clip)


def _tokens(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r = rollout(run, entry)
    return dict(queries=[torch.tensor(q) for q in r.queries], responses=[torch.tensor(x) for x in r.responses])


def _env(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    return dict(rewards=[rollout(run, entry).env_rewards])  # one tensor per process


def _learning_rate(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    return dict(learning_rate=float(run.args.learning_rate), gamma=float(run.facts["lr_gamma"]), step=entry["step"])


# --------------------------------------------------------------------------------------------------------------------
# Time: the fake clock's costs of the work inside each timer
# --------------------------------------------------------------------------------------------------------------------


def seconds(run: Run, entry: dict[str, Any]) -> dict[str, torch.Tensor]:
    (t,) = run.within(Timing, entry["step"])
    return {f"{phase}_s": torch.tensor(costs, dtype=torch.float64) for phase, costs in t.work.items()}


def _time_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    s = seconds(run, entry)
    none = torch.zeros(0, dtype=torch.float64)
    parts = {name: s.get(name, none) for name in (
        "collate_s", "policy_forward_s", "ref_forward_s", "full_log_softmax_s", "compute_rewards_s",
        "compute_advantages_s", "minibatch_forward_s", "train_minibatch_s", "stack_dicts_s", "record_step_stats_s",
        "stats_to_np_s", "kl_update_s")}
    timers = dict(
        forward_pass=float(parts["collate_s"].sum() + parts["policy_forward_s"].sum() + parts["ref_forward_s"].sum()),
        compute_rewards=float(parts["full_log_softmax_s"].sum() + parts["compute_rewards_s"].sum()),
        compute_advantages=float(parts["compute_advantages_s"].sum()),
        optimize_step=float(parts["minibatch_forward_s"].sum() + parts["train_minibatch_s"].sum()),
        calc_stats=float(parts["stack_dicts_s"].sum() + parts["record_step_stats_s"].sum()
                         + parts["stats_to_np_s"].sum()),
    )
    return {**parts, **timers, "kl_update_s": float(parts["kl_update_s"].sum())}


ROLLOUT: dict[str, Callable[[Run, dict[str, Any]], dict[str, Any]]] = {
    "objective/kl": _kl,
    "objective/kl_dist": _kl,
    "objective/logprobs": _sampled,
    "objective/ref_logprobs": _sampled,
    "objective/kl_coef": _kl_coef,
    "objective/entropy": _sampled,
    "ppo/mean_non_score_reward": _non_score,
    "ppo/mean_scores": _scores,
    "ppo/std_scores": _scores,
    "tokens/queries_len_mean": _tokens,
    "tokens/queries_len_std": _tokens,
    "tokens/queries_dist": _tokens,
    "tokens/responses_len_mean": _tokens,
    "tokens/responses_len_std": _tokens,
    "tokens/responses_dist": _tokens,
    "env/reward_mean": _env,
    "env/reward_std": _env,
    "env/reward_dist": _env,
    "game_log": _env,
    "ppo/learning_rate": _learning_rate,
}

UPDATES = [
    "ppo/loss/policy", "ppo/loss/value", "ppo/loss/total",
    "ppo/policy/entropy", "ppo/policy/approxkl", "ppo/policy/policykl", "ppo/policy/clipfrac",
    "ppo/policy/advantages", "ppo/policy/advantages_mean", "ppo/policy/ratio",
    "ppo/returns/mean", "ppo/returns/var",
    "ppo/val/vpred", "ppo/val/error", "ppo/val/clipfrac", "ppo/val/mean", "ppo/val/var", "ppo/val/var_explained",
]

TIMERS = ["time/ppo/forward_pass", "time/ppo/compute_rewards", "time/ppo/compute_advantages",
          "time/ppo/optimize_step", "time/ppo/calc_stats", "time/ppo/total"]


def _table() -> dict[str, Adapter]:
    table = {f"ppo_legacy/{key}": Adapter(RUNS, one(key, fn), ATOL) for key, fn in ROLLOUT.items()}
    table.update({f"ppo_legacy/{key}": Adapter(RUNS, one(key, update_inputs), ATOL) for key in UPDATES})
    table["ppo_legacy/ppo/val/var_explained"] = Adapter(RUNS, one("ppo/val/var_explained", update_inputs), RATIO_ATOL)
    table.update({f"ppo_legacy/{key}": Adapter(RUNS, one(key, _time_inputs), TIME_ATOL) for key in TIMERS})
    return table


ADAPTERS: dict[str, dict[str, Adapter]] = {"0.11.4": _table()}

# one line shows the trainer: nothing to tell apart
TOLD_APART: dict[str, dict[str, str]] = {}
