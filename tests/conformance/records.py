"""What a recorded GRPOTrainer run holds, and its file format (plain dicts and tensors written by ``torch.save``).

The runs execute in the virtualenv of the TRL release under test (``trl_runs.py``), the tests read the file in the
project's own virtualenv. Both import this module, so it needs nothing but ``torch`` and the standard library.

Each record carries ``log_step = state.global_step + 1`` at capture time: the optimizer step it belongs to. A log
entry with ``step == s`` averages the records of the optimizer steps after the previous entry up to ``s``
(``Run.window``); with ``logging_steps=1`` that is exactly ``log_step == s``.
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

FORMAT = 2  # bump when a record gains or loses a field


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


@dataclass
class Run:
    name: str
    trl_version: str
    transformers_version: str
    args: Any  # GRPOConfig.to_dict() in the file; a SimpleNamespace with the same fields once loaded
    log_history: list[dict[str, Any]]
    gen_batches: list[GenBatch] = field(default_factory=list)
    micro_batches: list[MicroBatch] = field(default_factory=list)
    opt_steps: list[OptStep] = field(default_factory=list)
    reward_func_names: list[str] = field(default_factory=list)
    custom_metric_names: list[str] = field(default_factory=list)
    num_prompts: int = 0  # rows of the training dataset
    seconds: float = 0.0

    def entries(self) -> list[dict[str, Any]]:
        """The per-step training log entries (the final runtime summary left out)."""
        return [e for e in self.log_history if "step" in e and "train_runtime" not in e]

    def window(self, step: int) -> range:
        """The optimizer steps (1-based, as ``log_step``) whose values the log entry ``step`` averages."""
        earlier = [e["step"] for e in self.entries() if e["step"] < step]
        return range((max(earlier) if earlier else 0) + 1, step + 1)

    def gen_for(self, step: int) -> list[GenBatch]:
        return [g for g in self.gen_batches if g.log_step in self.window(step)]

    def micro_for(self, step: int) -> list[MicroBatch]:
        return [m for m in self.micro_batches if m.log_step in self.window(step)]

    def opt_for(self, step: int) -> list[OptStep]:
        return [o for o in self.opt_steps if o.log_step in self.window(step)]


def save_runs(runs: dict[str, Run], path: str | Path) -> None:
    """Write runs as plain containers (loadable with ``weights_only=True``: no pickled classes)."""
    payload = {"format": FORMAT, "runs": {name: dataclasses.asdict(run) for name, run in runs.items()}}
    torch.save(payload, str(path))


def load_runs(path: str | Path) -> dict[str, Run]:
    payload = torch.load(str(path), weights_only=True)
    if payload.get("format") != FORMAT:
        raise ValueError(f"{path}: record format {payload.get('format')}, this harness reads {FORMAT}")
    runs = {}
    for name, d in payload["runs"].items():
        runs[name] = Run(
            **{
                **d,
                "args": types.SimpleNamespace(**d["args"]),
                "gen_batches": [GenBatch(**g) for g in d["gen_batches"]],
                "micro_batches": [MicroBatch(**m) for m in d["micro_batches"]],
                "opt_steps": [OptStep(**o) for o in d["opt_steps"]],
            }
        )
    return runs
