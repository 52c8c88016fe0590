"""What SFT's probes record (``probes.py``): one record per loss call (training or evaluation) and per optimizer step.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class MicroBatch:
    """One training call of ``compute_loss``: the batch TRL saw and the logits of the parameters it used."""

    log_step: int  # the optimizer step this micro-batch belongs to (global_step + 1 at the call)
    input_ids: torch.Tensor  # [B, L]
    attention_mask: torch.Tensor  # [B, L], 1 on real tokens (prompt and completion), 0 on padding
    labels: torch.Tensor  # [B, L], -100 where no loss is taken (padding, and the prompt with completion-only loss)
    logits: torch.Tensor  # [B, L, V] from a plain forward with the same parameters, unshifted
    num_items_in_batch: torch.Tensor | None  # what HF's Trainer passed (label tokens of the whole optimizer step)
    loss: torch.Tensor  # what compute_loss returned
    num_processes: int


@dataclass
class EvalBatch:
    """One evaluation call of ``compute_loss`` (fields as in ``MicroBatch``); ``log_step`` is the global step of the
    evaluation it belongs to, which is the ``step`` of its ``eval_*`` entry."""

    log_step: int
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor
    logits: torch.Tensor
    loss: torch.Tensor


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step()
    lr_used: float  # the scheduler's rate for this step, read right after optimizer.step()
    lr_next: float  # the rate after lr_scheduler.step(), i.e. the next step's
    micro_steps_done: int  # micro-batches processed so far in training
    steps_in_epoch: int  # len(train_dataloader) as HF counts it


RECORDS = (MicroBatch, EvalBatch, OptStep)
