"""What the legacy PPO probes record (``probes.py``): one record per ``step()`` call (the rollout), per mini-batch
update (``loss()``), per KL-controller update and per ``log_stats()`` table, plus the work the fake clock timed.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``). Each record
carries ``log_step``: the 1-based number of the ``step()`` call it belongs to, which is also the ``step`` of the log
entry built from that call (legacy PPO logs every call; there is no logging window).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Rollout:
    """One ``step()`` call up to the PPO epochs: the batch, both forward passes and the shaped rewards."""

    log_step: int
    queries: list[list[int]]
    responses: list[list[int]]
    raw_scores: torch.Tensor  # [B] the scores passed to step()
    scores: torch.Tensor  # [B] after use_score_scaling / score_clip, as compute_rewards received them
    input_ids: torch.Tensor  # [B, L] query + response, padded by the data collator
    attention_mask: torch.Tensor  # [B, L]
    logits: torch.Tensor  # [B, L-1, V] policy logits at every position but the last (the rollout pass)
    ref_logits: torch.Tensor  # [B, L-1, V] reference model logits
    logprobs: torch.Tensor  # [B, L-1] TRL's all_logprobs (the policy before this step's updates)
    ref_logprobs: torch.Tensor  # [B, L-1]
    values: torch.Tensor  # [B, L-1] the value head's predictions, unmasked
    masks: torch.Tensor  # [B, L-1] response mask as TRL built it
    kl_coef: float  # kl_ctl.value when compute_rewards ran
    kls: torch.Tensor  # [B, L-1] per-token KL estimates TRL computed
    non_score_reward: torch.Tensor  # [B, L-1]
    rewards: torch.Tensor  # [B, L-1] shaped rewards
    advantages: torch.Tensor  # [B, L-1] whitened advantages (compute_advantages' output)
    returns: torch.Tensor  # [B, L-1]
    learning_rate: float  # the optimizer's lr while this step's updates ran
    env_rewards: torch.Tensor  # [B] the rewards passed to log_stats()


@dataclass
class MiniBatch:
    """One call of ``PPOTrainer.loss``: the tensors one mini-batch update saw."""

    log_step: int
    old_logprobs: torch.Tensor  # [b, L-1] from the rollout pass
    values: torch.Tensor  # [b, L-1] rollout values, masked
    logits: torch.Tensor  # [b, L-1, V] of the mini-batch forward pass (current parameters)
    vpreds: torch.Tensor  # [b, L-1]
    logprobs: torch.Tensor  # [b, L-1]
    mask: torch.Tensor  # [b, L-1]
    advantages: torch.Tensor  # [b, L-1] whitened, every position
    returns: torch.Tensor  # [b, L-1]


@dataclass
class KLUpdate:
    """One call of ``kl_ctl.update`` at the end of ``step()``."""

    log_step: int
    value_before: float
    current: float  # the objective/kl it was given
    n_steps: int
    value_after: float


@dataclass
class Timing:
    """The work the fake clock timed during one ``step()``: seconds per instrumented call, by phase name, in order."""

    log_step: int
    work: dict[str, list[float]]


@dataclass
class GameLog:
    """The ``game_log`` table ``log_stats()`` built (W&B mode), as columns and rows."""

    log_step: int
    columns: list[str]
    rows: list[list]
RECORDS = (Rollout, MiniBatch, KLUpdate, Timing, GameLog)
