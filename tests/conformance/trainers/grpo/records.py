"""What GRPO's probes record (``probes.py``): one record per generation batch, per loss call, per optimizer step.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``). Every
record carries ``log_step``, the optimizer step it belongs to (``driver.Run.within`` picks a log entry's window).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class GenBatch:
    """One call of ``_generate_and_score_completions``: what TRL generated and how it scored it."""

    log_step: int
    prompt_ids: list[list[int]]  # as TRL's ``_generate`` returned them
    completion_ids: list[list[int]]
    completions: list[str]  # the decoded texts the reward functions saw
    rewards_per_func: torch.Tensor  # [N, F] exactly as ``_calculate_rewards`` returned it, NaN for None
    reward_weights: torch.Tensor  # [F]
    reward_func_names: list[str]
    num_generations: int
    advantages: torch.Tensor  # [N]
    num_items_in_batch: torch.Tensor
    completion_mask: torch.Tensor  # [N, T]
    logged_metrics: dict[str, list[float]]  # values reward functions passed to ``log_metric`` (TRL >= 1.0), by name
    num_input_tokens_seen_before: int  # state.num_input_tokens_seen before this batch
    num_input_tokens_seen: int  # the counter after this batch
    eos_token_ids: list[int]
    pad_token_id: int

    @property
    def completion_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.completion_ids])

    @property
    def prompt_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.prompt_ids])

    @property
    def length_mask(self) -> torch.Tensor:
        """[N, T] completion mask rebuilt from the completion lengths (1 up to and including EOS, 0 on padding)."""
        lengths = self.completion_lengths
        width = int(lengths.max())
        return (torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)).long()

    @property
    def padded_completion_ids(self) -> torch.Tensor:
        """[N, T] completion ids, right-padded with the pad id."""
        width = max(len(ids) for ids in self.completion_ids)
        return torch.tensor([ids + [self.pad_token_id] * (width - len(ids)) for ids in self.completion_ids])

    @property
    def is_truncated(self) -> torch.Tensor:
        stop = set(self.eos_token_ids) | {self.pad_token_id}
        return torch.tensor([ids[-1] not in stop for ids in self.completion_ids])


@dataclass
class MicroBatch:
    """One call of ``_compute_loss``: the inputs TRL's loss saw and what it computed from them."""

    log_step: int
    prompt_ids: torch.Tensor
    prompt_mask: torch.Tensor
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor
    advantages: torch.Tensor  # [B]
    per_token_logps: torch.Tensor  # [B, T], TRL's own values from this forward
    entropies: torch.Tensor  # [B, T]
    logits: torch.Tensor  # [B, T, V] unscaled logits predicting each completion token (a plain forward, same params)
    old_per_token_logps_input: torch.Tensor | None  # what TRL received (None when on-policy)
    ref_per_token_logps: torch.Tensor | None
    num_items_in_batch: torch.Tensor
    loss: torch.Tensor  # what _compute_loss returned (already scaled for accumulation)
    gradient_accumulation_steps: int
    steps_per_generation: int
    num_processes: int
    sync_gradients: bool
    # the entropy-bonus controller (TRL >= 1.8); None on releases without one
    entropy_coef_before: float | None = None
    entropy_coef_after: float | None = None
    last_world_entropy_before: float | None = None

    @property
    def old_per_token_logps(self) -> torch.Tensor:
        """TRL's substitution: per_token_logps.detach() when no old log-probs were passed."""
        if self.old_per_token_logps_input is None:
            return self.per_token_logps
        return self.old_per_token_logps_input

    @property
    def mask(self) -> torch.Tensor:
        return self.completion_mask


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step() (after HF's clipping)
    learning_rate: float  # the scheduler's current value (what HF logs)
    optimizer_step_index: int  # global_step before the step (0-based)
    micro_steps_done: int  # micro-batches processed so far (GRPOTrainer._step)
    steps_in_epoch: int  # len(train_dataloader) as HF counts it


RECORDS = (GenBatch, MicroBatch, OptStep)
