"""Adapters: how each Reward page's snippet is fed from a recorded ``RewardTrainer`` run, per TRL release; and the keys
whose snippets must tell an older release from the latest one.

``ADAPTERS[trl_release]`` maps a metric id (``reward/<key>``) to a ``driver.Adapter`` (see ``trainers/grpo/adapters.py``
for the conventions). A log entry ``step == s`` averages the micro-batches of the optimizer steps after the previous
entry up to ``s`` (``Run.within``): the TRL keys take one tensor per micro-batch of that window. ``num_tokens`` takes
the attention masks of every training micro-batch so far. ``test_runs.py`` feeds the evaluation forms (``eval_*``)
through the same adapters, with the evaluation batches as micro-batches; ``EVAL_ONLY`` holds the adapters of keys a
release logs only in evaluation (TRL 0.11.4's ``eval_accuracy``), which the driver, reading training entries, cannot
use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import MicroBatch, OptStep

# transformers 4.x rounds the logged `loss` to 4 decimals: half a unit of the 4th decimal, plus float32 slack
ROUNDED_LOSS_ATOL = 5e-5 + 1e-6


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def _pairs(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    """The scores of the window's pairs, one tensor per micro-batch."""

    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        w = micro(run, entry)
        return [
            (dict(rewards_chosen=[m.rewards_chosen for m in w], rewards_rejected=[m.rewards_rejected for m in w]), key)
        ]

    return cases


def _loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        rewards_chosen=[m.rewards_chosen for m in w],
        rewards_rejected=[m.rewards_rejected for m in w],
        margin=[m.margin for m in w],
        center_rewards_coefficient=run.args.center_rewards_coefficient,
        gradient_accumulation_steps=[m.gradient_accumulation_steps for m in w],
        num_optimizer_steps=len(run.window(entry["step"])),
    )
    return [(kwargs, "loss")]


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    so_far = [m.attention_mask for m in run.of(MicroBatch) if m.log_step <= entry["step"]]
    return [(dict(attention_mask=so_far), "num_tokens")]


def _grad_norm(run: Run, entry: dict[str, Any]) -> list[Case]:
    last = run.within(OptStep, entry["step"])[-1]  # HF logs the norm of the window's last optimizer step
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
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        num_rows=int(run.facts["num_rows"]),
        per_device_train_batch_size=int(run.args.per_device_train_batch_size),
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
        num_processes=1,
    )
    return [(kwargs, ["epoch"])]


def _trainer_keys(loss_atol: float) -> dict[str, Adapter]:
    return {
        "reward/loss": Adapter(("main",), _loss, atol=loss_atol),
        "reward/grad_norm": Adapter(("main",), _grad_norm, atol=0.0),
        "reward/learning_rate": Adapter(("main",), _learning_rate, atol=0.0),
        "reward/epoch": Adapter(("main",), _epoch, atol=0.0),
    }


# the scores are TRL's own up to a separate no-grad forward of the same parameters: exact on these runs
TRL_KEYS = {
    **{
        f"reward/{k}": Adapter(("main",), _pairs(k), atol=0.0)
        for k in ("accuracy", "margin", "min_reward", "mean_reward", "max_reward")
    },
    "reward/num_tokens": Adapter(("main",), _num_tokens, atol=0.0),
}

ADAPTERS: dict[str, dict[str, Adapter]] = {
    "1.16.0": {**TRL_KEYS, **_trainer_keys(loss_atol=1e-6)},
    "1.12.0": {**TRL_KEYS, **_trainer_keys(loss_atol=1e-6)},
    "0.26.2": {**TRL_KEYS, **_trainer_keys(loss_atol=ROUNDED_LOSS_ATOL)},
    "0.11.4": _trainer_keys(loss_atol=ROUNDED_LOSS_ATOL),
}

# Keys a release logs only in evaluation: fed by test_runs.py from the evaluation batches
EVAL_ONLY: dict[str, dict[str, Adapter]] = {
    "0.11.4": {"reward/accuracy": Adapter(("main",), _pairs("accuracy"), atol=0.0)},
}

# Keys whose value TRL computes differently in an older site line than in the latest one, in a way these
# single-process runs show. The older release's snippet must reproduce its runs and fail on the latest release's
# runs, and the other way round.
TOLD_APART: dict[str, dict[str, str]] = {
    "0.11.4": {
        "reward/loss": "[B, 1] scores minus a [B] margin broadcast to a [B, B] matrix, every pair against every "
        "margin (< 0.24) vs. one margin per pair (>= 0.24)",
        "reward/learning_rate": "read after the scheduler has stepped, so the next step's rate (transformers 4.46) "
        "vs. the rate of the step just taken (transformers 5)",
    },
}
