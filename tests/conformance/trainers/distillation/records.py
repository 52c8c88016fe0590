"""What the distillation probes record (``probes.py``): one record per generation batch, per loss call and per
optimizer step. Plain fields and tensors only, so that a run file loads with ``weights_only=True``."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class GenBatch:
    """One call of ``_generate``: the prompts and completions of a generation batch (one process here)."""

    log_step: int
    prompt_ids: list[list[int]]
    completion_ids: list[list[int]]  # cut after the first EOS, as TRL returned them
    num_input_tokens_seen_before: int
    num_input_tokens_seen: int
    eos_token_ids: list[int]  # the ids TRL treats as EOS (the tokenizer's alone before 1.14.2)
    pad_token_id: int

    @property
    def completion_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.completion_ids])

    @property
    def prompt_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.prompt_ids])

    @property
    def last_token_ids(self) -> torch.Tensor:
        return torch.tensor([ids[-1] for ids in self.completion_ids])


@dataclass
class MicroBatch:
    """One call of ``_compute_loss``: the logits both models give at each completion position, and TRL's loss."""

    log_step: int
    completion_ids: torch.Tensor  # [B, T]
    mask: torch.Tensor  # [B, T] loss mask (completion mask, times the tool mask when there is one)
    student_logits: torch.Tensor  # [B, T, V] plain forward of the student, same parameters as TRL's loss
    teacher_logits: torch.Tensor  # [B, T, V]
    num_items_in_batch: torch.Tensor  # gathered token count of the whole generation batch (before / processes)
    loss: torch.Tensor  # what _compute_loss returned
    num_processes: int


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every student gradient right before optimizer.step()
    learning_rate: float


RECORDS = (GenBatch, MicroBatch, OptStep)
