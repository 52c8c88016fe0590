"""Adapters: how each distillation page's snippet is fed from a recorded run, per TRL release (see
``trainers/grpo/adapters.py`` for the conventions). Loss-side snippets take one tensor per micro-batch of the log
entry's window, generation-side snippets one tensor per generation batch of the window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import GenBatch, MicroBatch, OptStep


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def gens(run: Run, entry: dict[str, Any]) -> list[GenBatch]:
    gbs = run.within(GenBatch, entry["step"])
    assert gbs, f"{run.name}: no generation batch recorded for step {entry['step']}"
    return gbs


# --------------------------------------------------------------------------------------------------------------------
# Loss side
# --------------------------------------------------------------------------------------------------------------------


def _loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        student_logits=[m.student_logits for m in w],
        teacher_logits=[m.teacher_logits for m in w],
        mask=[m.mask for m in w],
        num_items_in_batch=[m.num_items_in_batch for m in w],
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
        beta=float(run.args.beta),
        temperature=float(run.args.temperature),
    )
    return [(kwargs, "loss")]


def _entropy(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        student_logits=[m.student_logits for m in w],
        mask=[m.mask for m in w],
        temperature=float(run.args.temperature),
    )
    return [(kwargs, "entropy")]


# --------------------------------------------------------------------------------------------------------------------
# Generation side
# --------------------------------------------------------------------------------------------------------------------


def _completions(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        w = gens(run, entry)
        kwargs = dict(
            completion_lengths=[g.completion_lengths for g in w],
            last_token_ids=[g.last_token_ids for g in w],
            eos_token_ids=torch.tensor(w[0].eos_token_ids),
            pad_token_id=w[0].pad_token_id,
            max_completion_length=int(run.args.max_completion_length),
        )
        return [(kwargs, key)]

    return cases


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        prompt_lengths=[g.prompt_lengths for g in w],
        completion_lengths=[g.completion_lengths for g in w],
        num_input_tokens_seen=w[0].num_input_tokens_seen_before,
    )
    return [(kwargs, "num_tokens")]


# --------------------------------------------------------------------------------------------------------------------
# Optimizer side (HF Trainer)
# --------------------------------------------------------------------------------------------------------------------


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
        num_prompts=run.facts["num_prompts"],
        per_device_train_batch_size=int(run.args.per_device_train_batch_size),
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
        num_processes=1,
    )
    return [(kwargs, ["epoch"])]


# --------------------------------------------------------------------------------------------------------------------
# Per release
# --------------------------------------------------------------------------------------------------------------------

RUNS = ("reverse", "forward", "jsd", "two_eos")
COMPLETION_KEYS = (
    "mean_length",
    "min_length",
    "max_length",
    "clipped_ratio",
    "mean_terminated_length",
    "min_terminated_length",
    "max_terminated_length",
)

V1 = {
    # the snippets divide by the logits' softmax in float32 like TRL, but TRL 1.15+ folds the vocabulary in tiles:
    # the two agree to float32 rounding
    "distillation/loss": Adapter(RUNS, _loss, atol=1e-6),
    "distillation/entropy": Adapter(RUNS, _entropy, atol=1e-6),
    **{
        f"distillation/completions/{k}": Adapter(RUNS, _completions(f"completions/{k}"), atol=0.0)
        for k in COMPLETION_KEYS
    },
    "distillation/num_tokens": Adapter(RUNS, _num_tokens, atol=0.0),
    "distillation/grad_norm": Adapter(RUNS, _grad_norm, atol=1e-6),
    "distillation/learning_rate": Adapter(RUNS, _learning_rate, atol=1e-12),
    "distillation/epoch": Adapter(RUNS, _epoch, atol=0.0),
}

ADAPTERS: dict[str, dict[str, Adapter]] = {"1.16.0": V1, "1.12.0": V1}

# The keys whose computation changed between 1.12.0 and 1.16.0 (the EOS ids, the Liger path, the output multipliers)
# differ only with a second EOS id in the generation config, Liger, or Falcon-H1/Granite-like models; the "two_eos"
# run shows the EOS change through the recorded completions themselves, which the same snippet reads in both
# releases with that release's EOS ids. No snippet differs between the two lines, so nothing is told apart.
TOLD_APART: dict[str, dict[str, str]] = {}
