"""Adapters: how each SFT page's snippet is fed from a recorded ``SFTTrainer`` run, per TRL release; and the keys whose
snippets must tell an older release from the latest one.

``ADAPTERS[trl_release]`` maps a metric id (``sft/<key>``) to a ``driver.Adapter`` (see ``trainers/grpo/adapters.py``
for the conventions). A log entry ``step == s`` averages the micro-batches of the optimizer steps after the previous
entry up to ``s`` (``Run.within``): the TRL keys take one tensor per micro-batch of that window. ``num_tokens`` takes
the attention masks of every training micro-batch so far (it is a running total). ``test_runs.py`` feeds the
evaluation forms (``eval_*``) through the same adapters, with the evaluation batches as micro-batches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import EvalBatch, MicroBatch, OptStep

# transformers 4.x rounds the logged `loss` to 4 decimals: half a unit of the 4th decimal, plus float32 slack
ROUNDED_LOSS_ATOL = 5e-5 + 1e-6


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def token_inputs(batches: list[MicroBatch] | list[EvalBatch]) -> dict[str, Any]:
    """What the per-token keys read, one tensor per micro-batch."""
    return dict(
        logits=[b.logits for b in batches],
        labels=[b.labels for b in batches],
        attention_mask=[b.attention_mask for b in batches],
    )


def _per_token(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(token_inputs(micro(run, entry)), key)]

    return cases


def _loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        logits=[m.logits for m in w],
        labels=[m.labels for m in w],
        num_items_in_batch=[m.num_items_in_batch for m in w],
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
        "sft/loss": Adapter(("main",), _loss, atol=loss_atol),
        "sft/grad_norm": Adapter(("main",), _grad_norm, atol=0.0),  # same per-parameter norms, then their norm
        "sft/learning_rate": Adapter(("main",), _learning_rate, atol=0.0),
        "sft/epoch": Adapter(("main",), _epoch, atol=0.0),
    }


def _trl_keys() -> dict[str, Adapter]:
    return {
        # argmax and counts: the same integers as TRL, one float32 division per micro-batch
        "sft/mean_token_accuracy": Adapter(("main",), _per_token("mean_token_accuracy"), atol=0.0),
        # a plain log_softmax of the full logits vs. TRL's fused / chunked head: float32 rounding only
        "sft/entropy": Adapter(("main",), _per_token("entropy")),
        "sft/num_tokens": Adapter(("main",), _num_tokens, atol=0.0),
    }


ADAPTERS: dict[str, dict[str, Adapter]] = {
    "1.16.0": {**_trl_keys(), **_trainer_keys(loss_atol=1e-6)},
    "1.12.0": {**_trl_keys(), **_trainer_keys(loss_atol=1e-6)},
    "0.26.2": {**_trl_keys(), **_trainer_keys(loss_atol=ROUNDED_LOSS_ATOL)},
    "0.11.4": _trainer_keys(loss_atol=ROUNDED_LOSS_ATOL),
}

# Keys whose value TRL computes differently in an older site line than in the latest one, in a way these
# single-process runs show. The older release's snippet must reproduce its runs and fail on the latest release's
# runs, and the other way round.
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "sft/entropy": "mean over every attention-masked position, prompt included and unshifted (< 1.3) vs. over the "
        "positions that predict a label (>= 1.3)",
    },
    "0.11.4": {
        "sft/learning_rate": "read after the scheduler has stepped, so the next step's rate (transformers 4.46) vs. "
        "the rate of the step just taken (transformers 5)",
    },
}
