"""What the Reward trainer's probes record (``probes.py``): one record per loss call (training or evaluation) and
per optimizer step. Plain fields and tensors only (``driver.save_runs``)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class MicroBatch:
    """One training call of ``compute_loss``: the scores of the batch's pairs and what TRL returned."""

    log_step: int  # global_step + 1 at the call
    rewards_chosen: torch.Tensor  # [B] the reward model's score of each chosen sequence
    rewards_rejected: torch.Tensor  # [B] ... of each rejected sequence, same order
    margin: torch.Tensor | None  # [B] the dataset's `margin` column, when it has one
    attention_mask: torch.Tensor  # [2B, L] (chosen rows then rejected rows; two [B, L] masks stacked before 0.24)
    loss: torch.Tensor  # what compute_loss returned
    gradient_accumulation_steps: int  # micro-batches of this optimizer step (HF's current_gradient_accumulation_steps)


@dataclass
class EvalBatch:
    """One evaluation call of ``compute_loss`` (fields as in ``MicroBatch``); ``log_step`` is the global step of the
    evaluation, the ``step`` of its ``eval_*`` entry."""

    log_step: int
    rewards_chosen: torch.Tensor
    rewards_rejected: torch.Tensor
    margin: torch.Tensor | None
    attention_mask: torch.Tensor
    loss: torch.Tensor


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step()
    lr_used: float  # the scheduler's rate for this step
    lr_next: float  # the rate after lr_scheduler.step()
    micro_steps_done: int
    steps_in_epoch: int


RECORDS = (MicroBatch, EvalBatch, OptStep)
