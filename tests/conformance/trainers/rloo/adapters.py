"""Adapters: how each RLOO page's snippet is fed from a recorded run, per TRL release; and the keys whose snippets
must tell an older release from the latest one. The interface is that of ``trainers/grpo/adapters.py``: a metric
id (``rloo/<key>``, templates kept) maps to a ``driver.Adapter`` naming its runs and a function
``(run, log_entry) -> [(inputs, logged key or keys), ...]``; every snippet receives the inputs its signature names.

GRPO-style releases (0.26.2, 1.12.0, 1.16.0): generation-side keys read the window's generation batches, loss-side
keys its micro-batches, HF's keys its optimizer steps. The PPO-style trainer of 0.9.2 to 0.21 (0.11.4, the 0.11
line) logs once per update: an entry's ``Rollout`` (one) feeds the ``objective/*`` keys and ``val/num_eos_tokens``,
its ``PPOMicroBatch`` records (one per optimisation cell) the ``policy/*``, ``loss/*`` and ``val/ratio*`` keys, and
the settings plus the update number the counters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import INVALID_LOGPROB, GenBatch, MicroBatch, OptStep, PPOMicroBatch, Rollout, token_logprobs

# transformers 4.x (the 0.26.2 lock) rounds the logged `loss` to 4 decimals: half a unit of the 4th decimal
ROUNDED_LOSS_ATOL = 5e-5 + 1e-6

# --------------------------------------------------------------------------------------------------------------------
# GRPO-style trainer: windows
# --------------------------------------------------------------------------------------------------------------------


def gens(run: Run, entry: dict[str, Any]) -> list[GenBatch]:
    w = run.within(GenBatch, entry["step"])
    assert w, f"{run.name}: no generation batch recorded for step {entry['step']}"
    return w


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    w = run.within(MicroBatch, entry["step"])
    assert w, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return w


def _clip_range(run: Run) -> list[float] | None:
    r = getattr(run.args, "reward_clip_range", None)
    return None if r is None else [float(x) for x in r]


def reward_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """The scores of the window's generation batches and everything RLOO combines them with."""
    w = gens(run, entry)
    return dict(
        rewards_per_func=[g.rewards_per_func for g in w],
        reward_weights=w[0].reward_weights,
        num_generations=w[0].num_generations,
        beta=float(run.args.beta),
        old_per_token_logps=[g.old_per_token_logps for g in w],
        ref_per_token_logps=[g.ref_per_token_logps for g in w],
        completion_mask=[g.completion_mask for g in w],
        reward_clip_range=_clip_range(run),
    )


def _reward_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(reward_inputs(run, entry), key)]

    return cases


def _rewards_per_function(stat: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        keys = [f"rewards/{name}/{stat}" for name in run.templates["name"]]
        return [(dict(rewards_per_func=[g.rewards_per_func for g in gens(run, entry)]), keys)]

    return cases


def _kl(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        old_per_token_logps=[g.old_per_token_logps for g in w],
        ref_per_token_logps=[g.ref_per_token_logps for g in w],
        completion_mask=[g.completion_mask for g in w],
    )
    return [(kwargs, "kl")]


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        prompt_lengths=[g.prompt_lengths for g in w],
        completion_lengths=[g.completion_lengths for g in w],
        num_input_tokens_seen=w[0].num_input_tokens_seen_before,
    )
    return [(kwargs, "num_tokens")]


def _completions(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        w = gens(run, entry)
        kwargs = dict(
            completion_lengths=[g.completion_lengths for g in w],
            completion_ids=[g.padded_completion_ids for g in w],
            is_truncated=[g.is_truncated for g in w],
            eos_token_ids=torch.tensor(w[0].eos_token_ids),
            eos_token_id=w[0].eos_token_ids[0],
            pad_token_id=w[0].pad_token_id,
        )
        return [(kwargs, key)]

    return cases


def _log_metric_name(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    return [
        (dict(logged_values=[torch.tensor(g.logged_metrics.get(name, []), dtype=torch.float32) for g in w]), name)
        for name in run.templates["log_metric_name"]
    ]


# --------------------------------------------------------------------------------------------------------------------
# GRPO-style trainer: loss side and HF Trainer
# --------------------------------------------------------------------------------------------------------------------


def _entropy(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        logits=[m.logits for m in w],
        mask=[m.completion_mask for m in w],
        temperature=float(run.args.temperature),
    )
    return [(kwargs, "entropy")]


def loss_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    w = micro(run, entry)
    eps = float(run.args.epsilon)
    return dict(
        per_token_logps=[m.per_token_logps for m in w],
        old_logps=[m.old_logps for m in w],
        advantages=[m.advantages for m in w],
        mask=[m.completion_mask for m in w],
        epsilon_low=eps,
        epsilon_high=float(run.args.epsilon_high) if run.args.epsilon_high is not None else eps,
        epsilon=eps,
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
    )


def _loss_key(key: str | list[str]) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(loss_inputs(run, entry), key)]

    return cases


def _grad_norm(run: Run, entry: dict[str, Any]) -> list[Case]:
    last = run.within(OptStep, entry["step"])[-1]
    return [(dict(grads=last.grads, max_grad_norm=float(run.args.max_grad_norm)), "grad_norm")]


def _learning_rate(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        max_steps=int(run.args.max_steps),
        learning_rate=float(run.args.learning_rate),
        warmup_steps=run.args.warmup_steps,
    )
    return [(kwargs, ["learning_rate"])]


def _epoch(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        num_prompts=run.facts["num_prompts"],
        num_generations=int(a.num_generations),
        per_device_train_batch_size=int(a.per_device_train_batch_size),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=1,
        steps_per_generation=int(a.steps_per_generation),
        num_iterations=int(a.num_iterations),
    )
    return [(kwargs, ["epoch"])]



# --------------------------------------------------------------------------------------------------------------------
# PPO-style trainer (0.11.4): one log entry per update
# --------------------------------------------------------------------------------------------------------------------

# 0.11.4 takes log-probabilities as log_softmax + gather; the snippets' sums over a response round differently in the
# last bits
LOG_SOFTMAX_ATOL = 1e-5


def rollout(run: Run, entry: dict[str, Any]) -> Rollout:
    found = run.within(Rollout, entry["step"])
    assert len(found) == 1, f"{run.name}: {len(found)} rollouts recorded for the entry at step {entry['step']}"
    return found[0]


def cells(run: Run, entry: dict[str, Any]) -> list[PPOMicroBatch]:
    mbs = run.within(PPOMicroBatch, entry["step"])
    assert mbs, f"{run.name}: no optimisation micro-batch recorded for the entry at step {entry['step']}"
    return sorted(mbs, key=lambda m: (m.ppo_epoch, m.mini_batch, m.micro_batch))


def update_number(run: Run, entry: dict[str, Any]) -> int:
    """The update an entry logs (its `step` also counts the mini-batches, so it is not the update)."""
    return rollout(run, entry).episode // int(run.facts["batch_size"])


def new_logprobs(r: Rollout, m: PPOMicroBatch) -> torch.Tensor:
    """The optimisation loop's log-probabilities of the cell's responses, filled after each end as TRL fills them."""
    lp = token_logprobs(m.logits / (r.temperature + 1e-7), r.responses[m.indices])
    return torch.masked_fill(lp, r.padding_mask[m.indices], INVALID_LOGPROB)


def legacy_rollout_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r = rollout(run, entry)
    return dict(
        logprobs=r.logprobs,
        ref_logprobs=r.ref_logprobs,
        kl_coef=r.kl_coef,
        eos_token_id=r.eos_token_id,
        missing_eos_penalty=r.missing_eos_penalty,
        responses=r.postprocessed_responses,
    )


def _legacy_rollout_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        r = rollout(run, entry)
        kwargs = legacy_rollout_inputs(run, entry)
        # objective/scores applies the missing-EOS penalty itself; objective/rlhf_reward takes the penalised scores
        kwargs["scores"] = r.scores if key == "objective/scores" else r.penalized_scores
        return [(kwargs, key)]

    return cases


def _legacy_num_eos_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    r = rollout(run, entry)
    return [(dict(responses=r.responses, eos_token_id=r.eos_token_id), "val/num_eos_tokens")]


def legacy_loop_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r, mbs = rollout(run, entry), cells(run, entry)
    a = run.args
    return dict(
        new_logprobs=[new_logprobs(r, m) for m in mbs],
        old_logprobs=[r.logprobs[m.indices] for m in mbs],
        advantages=[r.advantages[m.indices] for m in mbs],
        logits=[m.logits for m in mbs],
        temperature=r.temperature,
        cliprange=float(a.cliprange),
        num_ppo_epochs=int(a.num_ppo_epochs),
        num_mini_batches=int(a.num_mini_batches),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=r.num_processes,
    )


def _legacy_loop_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        mbs = cells(run, entry)
        a = run.args
        expected = int(a.num_ppo_epochs) * int(a.num_mini_batches) * int(a.gradient_accumulation_steps)
        assert len(mbs) == expected, f"{run.name}: {len(mbs)} cells recorded, TRL fills {expected}"
        return [(legacy_loop_inputs(run, entry), key)]

    return cases


def legacy_counter_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    a, r = run.args, rollout(run, entry)
    return dict(
        updates=torch.tensor([update_number(run, entry)]),
        per_device_train_batch_size=int(a.per_device_train_batch_size),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_mini_batches=int(a.num_mini_batches),
        num_processes=r.num_processes,
        train_dataset_len=int(run.facts["num_prompts"]),
        total_episodes=int(a.total_episodes),
        learning_rate=float(a.learning_rate),
        warmup_steps=a.warmup_steps,
        episodes=torch.tensor([r.episode]),
        seconds=torch.tensor([r.clock[1] - r.clock[0]], dtype=torch.float64),
    )


def _legacy_counter(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(legacy_counter_inputs(run, entry), [key])]

    return cases


LEGACY_RUNS = ("legacy_main", "legacy_one_cell")
LEGACY_ROLLOUT_KEYS = (
    "objective/kl",
    "objective/entropy",
    "objective/non_score_reward",
    "objective/rlhf_reward",
    "objective/scores",
)
LEGACY_LOOP_KEYS = (
    "policy/approxkl_avg",
    "policy/clipfrac_avg",
    "loss/policy_avg",
    "loss/value_avg",
    "val/clipfrac_avg",
    "policy/entropy_avg",
    "val/ratio",
    "val/ratio_var",
)
LEGACY_COUNTER_KEYS = ("lr", "episode", "epoch")


def _ppo_style() -> dict[str, Adapter]:
    """Every key the PPO-style trainer logs, reproduced from the two 0.11.4 runs."""
    table = {f"rloo/{k}": Adapter(LEGACY_RUNS, _legacy_rollout_key(k), atol=LOG_SOFTMAX_ATOL)
             for k in LEGACY_ROLLOUT_KEYS}
    table |= {f"rloo/{k}": Adapter(LEGACY_RUNS, _legacy_loop_key(k), atol=LOG_SOFTMAX_ATOL) for k in LEGACY_LOOP_KEYS}
    table |= {f"rloo/{k}": Adapter(LEGACY_RUNS, _legacy_counter(k), atol=1e-12) for k in LEGACY_COUNTER_KEYS}
    table["rloo/eps"] = Adapter(LEGACY_RUNS, _legacy_counter("eps"), atol=0.0)
    table["rloo/val/num_eos_tokens"] = Adapter(LEGACY_RUNS, _legacy_num_eos_tokens, atol=0.0)
    return table

# --------------------------------------------------------------------------------------------------------------------
# Per release
# --------------------------------------------------------------------------------------------------------------------

RUNS = ("main", "window")
COMPLETION_KEYS = (
    "mean_length",
    "min_length",
    "max_length",
    "clipped_ratio",
    "mean_terminated_length",
    "min_terminated_length",
    "max_terminated_length",
)
CLIP_KEYS = ("low_mean", "high_mean", "region_mean", "low_min", "high_max")


def _grpo_style() -> dict[str, Adapter]:
    """The keys every GRPO-style release logs (the 0.26.2 snippets of changed keys get the same inputs)."""
    return {
        # generation side: the rewards are reproduced bit for bit unless noted
        "rloo/reward": Adapter(RUNS, _reward_key("reward")),  # float32 sums vs TRL's group means
        "rloo/reward_std": Adapter(RUNS, _reward_key("reward_std")),  # torch.std vs TRL's nanstd
        "rloo/frac_reward_zero_std": Adapter(RUNS, _reward_key("frac_reward_zero_std"), atol=0.0),
        "rloo/rewards/{name}/mean": Adapter(RUNS, _rewards_per_function("mean"), atol=0.0),
        "rloo/rewards/{name}/std": Adapter(RUNS, _rewards_per_function("std")),
        "rloo/kl": Adapter(RUNS, _kl),
        **{f"rloo/completions/{k}": Adapter(RUNS, _completions(f"completions/{k}"), atol=0.0) for k in COMPLETION_KEYS},
        # loss side: TRL's own log-probs; the snippets compute the sequence ratio the way TRL does
        "rloo/entropy": Adapter(RUNS, _entropy),  # logits of a plain forward vs TRL's (fused) entropies
        **{f"rloo/clip_ratio/{k}": Adapter(RUNS, _loss_key(f"clip_ratio/{k}"), atol=0.0) for k in CLIP_KEYS},
        "rloo/num_tokens": Adapter(RUNS, _num_tokens, atol=0.0),
        # HF Trainer
        "rloo/loss": Adapter(RUNS, _loss_key("loss")),
        "rloo/grad_norm": Adapter(RUNS, _grad_norm, atol=0.0),  # the same per-parameter norms, then their norm
        "rloo/learning_rate": Adapter(RUNS, _learning_rate, atol=0.0),
        "rloo/epoch": Adapter(RUNS, _epoch),
    }


V1 = {**_grpo_style(), "rloo/{log_metric_name}": Adapter(RUNS, _log_metric_name)}
V026 = _grpo_style()
V026["rloo/loss"] = replace(V026["rloo/loss"], atol=ROUNDED_LOSS_ATOL)

ADAPTERS: dict[str, dict[str, Adapter]] = {"1.16.0": V1, "1.12.0": V1, "0.26.2": V026, "0.11.4": _ppo_style()}

TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "rloo/reward": "KL-penalized and clamped rewards (< 0.27) vs. the raw weighted sum (>= 1.6)",
        "rloo/reward_std": "mean of per-group stds of penalized rewards (< 0.27) vs. one std of the raw sums (>= 0.27)",
        "rloo/rewards/{name}/mean": "a NaN batch makes the window NaN (< 1.0) vs. is dropped (>= 1.0)",
        "rloo/rewards/{name}/std": "a NaN batch makes the window NaN (< 1.0) vs. is dropped (>= 1.0)",
        "rloo/clip_ratio/low_min": "min of per-process fractions (< 1.9) vs. of per-completion indicators (>= 1.9)",
        "rloo/clip_ratio/high_max": "max of per-process fractions (< 1.9) vs. of per-completion indicators (>= 1.9)",
    },
}
