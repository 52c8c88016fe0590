"""Adapters: how each PPO page's snippet is fed from a recorded run, per TRL release; and the keys whose snippets must
tell an older release from the latest one.

PPO writes one log entry per update (``logging_steps`` is not consulted), so an entry ``step == s`` belongs to update
``s``: its ``Rollout`` (one) and its ``MicroBatch`` records, in the order TRL ran them (PPO epoch, mini-batch,
micro-batch). The rollout-side snippets (``objective/*``, ``val/num_eos_tokens``) take that update's tensors; the
optimisation-side snippets (every ``*_avg`` key and ``val/ratio*``) take one tensor per micro-batch and the shape of
TRL's stats tensors; the counters (``episode``, ``epoch``, ``lr``, ``eps``) take the update number and the settings.

The tensors are rebuilt from what the probes captured exactly as TRL builds them (``records.py``): masks from the
truncated responses, log-probabilities from the captured logits. On 0.26.2, 1.9.2 and 1.12.0 that reproduces TRL's
own values bit for bit; 0.11.4 computes log-probabilities as log_softmax + gather, which rounds differently in the
last bits, hence the looser tolerance of its sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import MicroBatch, Rollout, token_logprobs

# 0.11.4 rounds its log-probabilities another way (log_softmax + gather, not gather − logsumexp); sums over a response
# of six such values differ in the 7th significant digit
LOG_SOFTMAX_ATOL = 1e-5


def rollout(run: Run, entry: dict[str, Any]) -> Rollout:
    found = run.within(Rollout, entry["step"])
    assert len(found) == 1, f"{run.name}: {len(found)} rollouts recorded for update {entry['step']}"
    return found[0]


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for update {entry['step']}"
    return sorted(mbs, key=lambda m: (m.ppo_epoch, m.mini_batch, m.micro_batch))


def stats_shape(run: Run) -> dict[str, int]:
    a = run.args
    return dict(
        num_ppo_epochs=int(a.num_ppo_epochs),
        num_mini_batches=int(a.num_mini_batches),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=1,
    )


def new_logprobs(r: Rollout, m: MicroBatch) -> torch.Tensor:
    """The loop's log-probabilities of the micro-batch's sampled tokens (logits divided as TRL divides them)."""
    return token_logprobs(m.logits / (r.temperature + 1e-7), r.responses[m.indices])


def vpred(r: Rollout, m: MicroBatch) -> torch.Tensor:
    v = m.vpred_full[:, r.context_length - 1 : -1]
    return torch.masked_fill(v, r.padding_mask_p1[m.indices], 0)


# --------------------------------------------------------------------------------------------------------------------
# Rollout side (one update's batch)
# --------------------------------------------------------------------------------------------------------------------


def rollout_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r = rollout(run, entry)
    return dict(
        logprobs=r.logprobs,
        ref_logprobs=r.ref_logprobs,
        padding_mask=r.padding_mask,
        scores=r.scores,
        responses=r.postprocessed_responses,
        raw_responses=r.responses,
        eos_token_id=r.eos_token_id,
        kl_coef=float(run.args.kl_coef),
        kl_estimator=getattr(run.args, "kl_estimator", "k1"),  # no such option before 0.17: always k1
        missing_eos_penalty=run.args.missing_eos_penalty,
    )


def _rollout_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(rollout_inputs(run, entry), key)]

    return cases


def _num_eos_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    r = rollout(run, entry)
    return [(dict(responses=r.responses, eos_token_id=r.eos_token_id), "val/num_eos_tokens")]


# --------------------------------------------------------------------------------------------------------------------
# Optimisation side (one tensor per micro-batch, in TRL's order)
# --------------------------------------------------------------------------------------------------------------------


def loop_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    r, mbs = rollout(run, entry), micro(run, entry)
    return dict(
        new_logprobs=[new_logprobs(r, m) for m in mbs],
        old_logprobs=[r.logprobs[m.indices] for m in mbs],
        padding_mask=[r.padding_mask[m.indices] for m in mbs],
        advantages=[r.advantages[m.indices] for m in mbs],
        logits=[m.logits for m in mbs],
        vpred=[vpred(r, m) for m in mbs],
        values=[r.values[m.indices] for m in mbs],
        returns=[r.returns[m.indices] for m in mbs],
        padding_mask_p1=[r.padding_mask_p1[m.indices] for m in mbs],
        cliprange=float(run.args.cliprange),
        cliprange_value=float(run.args.cliprange_value),
        temperature=float(run.args.temperature),
        **stats_shape(run),
    )


def _loop_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(loop_inputs(run, entry), key)]

    return cases


# --------------------------------------------------------------------------------------------------------------------
# Counters
# --------------------------------------------------------------------------------------------------------------------


def counter_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    a, r = run.args, rollout(run, entry)
    return dict(
        updates=torch.tensor([entry["step"]]),
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


def _counter(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(counter_inputs(run, entry), [key])]

    return cases


# --------------------------------------------------------------------------------------------------------------------
# Per release
# --------------------------------------------------------------------------------------------------------------------

RUNS = ("main", "one_cell")
ROLLOUT_KEYS = (
    "objective/kl",
    "objective/entropy",
    "objective/non_score_reward",
    "objective/rlhf_reward",
    "objective/scores",
)
LOOP_KEYS = (
    "policy/approxkl_avg",
    "policy/clipfrac_avg",
    "loss/policy_avg",
    "loss/value_avg",
    "val/clipfrac_avg",
    "policy/entropy_avg",
    "val/ratio",
    "val/ratio_var",
)
COUNTER_KEYS = ("eps", "lr", "episode", "epoch")


def _table(atol_sums: float = 1e-6) -> dict[str, Adapter]:
    """Every key the PPO trainer logs, reproduced from the same two runs; the captured tensors are TRL's own, so
    every value agrees exactly on 0.26.2 and 1.12.0 (tolerances only cover 0.11.4's other log-softmax)."""
    table = {f"ppo/{k}": Adapter(RUNS, _rollout_key(k), atol=atol_sums) for k in ROLLOUT_KEYS}
    table |= {f"ppo/{k}": Adapter(RUNS, _loop_key(k), atol=atol_sums) for k in LOOP_KEYS}
    table |= {f"ppo/{k}": Adapter(RUNS, _counter(k), atol=0.0) for k in COUNTER_KEYS}
    table["ppo/val/num_eos_tokens"] = Adapter(RUNS, _num_eos_tokens, atol=0.0)
    return table


ADAPTERS: dict[str, dict[str, Adapter]] = {
    "1.12.0": _table(),
    "0.26.2": _table(),
    "0.11.4": _table(atol_sums=LOG_SOFTMAX_ATOL),  # PPOv2Trainer
}

# Keys whose value an older site line computes differently from the latest one, in a way these runs show.
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "ppo/objective/entropy": "each padding position adds -1 (< 1.10.0) vs. padding masked out (>= 1.10.0)",
    },
    "0.11.4": {
        "ppo/objective/entropy": "each padding position adds -1 (< 1.10.0) vs. padding masked out (>= 1.10.0)",
        "ppo/episode": "a rollout batch includes num_mini_batches (< 0.17.0) vs. not (>= 0.17.0); the main run has 2",
        "ppo/epoch": "episodes per update include num_mini_batches (< 0.17.0) vs. not (>= 0.17.0)",
        "ppo/lr": "the schedule's length counts num_mini_batches in the batch (< 0.17.0) vs. not (>= 0.17.0)",
    },
}
