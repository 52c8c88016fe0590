"""What PPO's probes record (``probes.py``): one record per PPO update (the rollout and what the update logged from
it) and one per micro-batch of the optimisation loop.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``). Every
record carries ``log_step``, the update it belongs to (PPO logs once per update, so ``step == log_step``).

The tensors are what TRL computed from, captured before TRL touches them: the logits come unscaled (the loop divides
them by ``temperature + 1e-7`` in place, after the probe cloned them) and nothing is masked yet. ``Rollout`` rebuilds
TRL's masks and log-probabilities from them the way the trainer does, so that the adapters can hand each snippet
the inputs its page names.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

INVALID_LOGPROB = 1.0  # TRL's fill value for padding positions (every PPO release)


def first_true_indices(bools: torch.Tensor) -> torch.Tensor:
    """Per row, the index of the first True, or the row length when there is none (TRL's helper of that name)."""
    width = bools.shape[-1]
    return torch.where(bools.any(-1), bools.float().argmax(-1), torch.full_like(bools[..., 0], width, dtype=torch.long))


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """log softmax(logits)[token], computed as TRL's selective_log_softmax does for float32 (gather - logsumexp)."""
    picked = torch.gather(logits, -1, tokens.unsqueeze(-1)).squeeze(-1)
    return picked - torch.stack([torch.logsumexp(row, dim=-1) for row in logits])


@dataclass
class Rollout:
    """One PPO update: the batch TRL generated and scored, and the numbers it derived from it."""

    log_step: int
    queries: torch.Tensor  # [B, Lq] left-padded prompt ids
    query_responses: torch.Tensor  # [B, Lq + T] as batch_generation returned them
    gen_logits: torch.Tensor  # [B, T, V] the scores generate() returned (logits already divided by the temperature)
    ref_logits: torch.Tensor  # [B, T, V] the reference model's logits for the response tokens, not yet divided
    values_full: torch.Tensor  # [B, Lq + T] the value head on every position (before slicing and masking)
    scores: torch.Tensor  # [B] the reward model's score at the last real token, before any EOS penalty
    advantages_gae: torch.Tensor  # [B, T] GAE advantages before whitening (returns = these + values)
    advantages_whitened: torch.Tensor  # [B, T] what masked_whiten returned for them (padding not yet zeroed)
    rewards_whitened: torch.Tensor | None  # [B, T] masked_whiten of the rewards when whiten_rewards=True
    permutations: list[list[int]]  # the row order of each PPO epoch (np.random.permutation)
    clock: list[float]  # time.time() at the start of train() and when this update computed `eps`
    episode: int  # state.episode when the update logged
    lr: float  # the scheduler's last learning rate when the update logged
    eos_token_id: int
    pad_token_id: int
    stop_token_id: int | None  # where TRL truncates responses (None: no truncation)
    temperature: float
    num_processes: int

    @property
    def context_length(self) -> int:
        return int(self.queries.shape[1])

    @property
    def responses(self) -> torch.Tensor:
        """[B, T] the raw sampled response ids (what `val/num_eos_tokens` counts in)."""
        return self.query_responses[:, self.context_length :]

    @property
    def postprocessed_responses(self) -> torch.Tensor:
        """The responses truncated after the first stop token (TRL's truncate_response)."""
        r = self.responses
        if self.stop_token_id is None:
            return r
        first = first_true_indices(r == self.stop_token_id)
        idx = torch.arange(r.shape[1]).unsqueeze(0)
        return torch.masked_fill(r, idx > first.unsqueeze(1), self.pad_token_id)

    @property
    def sequence_lengths(self) -> torch.Tensor:
        """[B] index of the last real response token: first pad of the truncated response minus one."""
        return first_true_indices(self.postprocessed_responses == self.pad_token_id) - 1

    @property
    def padding_mask(self) -> torch.Tensor:
        """[B, T] True after the last real token (TRL's padding_mask)."""
        idx = torch.arange(self.responses.shape[1]).unsqueeze(0)
        return idx > self.sequence_lengths.unsqueeze(1)

    @property
    def padding_mask_p1(self) -> torch.Tensor:
        """[B, T] True from two positions after the last real token on (TRL's padding_mask_p1, for the values)."""
        idx = torch.arange(self.responses.shape[1]).unsqueeze(0)
        return idx > (self.sequence_lengths + 1).unsqueeze(1)

    @property
    def logprobs(self) -> torch.Tensor:
        """[B, T] log-probability of each sampled token under the rollout policy (from the generation scores)."""
        return token_logprobs(self.gen_logits, self.responses)

    @property
    def ref_logprobs(self) -> torch.Tensor:
        return token_logprobs(self.ref_logits / (self.temperature + 1e-7), self.responses)

    @property
    def values(self) -> torch.Tensor:
        """[B, T] the rollout values, zeroed on padding_mask_p1 as TRL does."""
        v = self.values_full[:, self.context_length - 1 : -1]
        return torch.masked_fill(v, self.padding_mask_p1, 0)

    @property
    def advantages(self) -> torch.Tensor:
        """[B, T] the whitened advantages the loss uses (0 on padding)."""
        return torch.masked_fill(self.advantages_whitened, self.padding_mask, 0)

    @property
    def returns(self) -> torch.Tensor:
        return self.advantages_gae + self.values


@dataclass
class MicroBatch:
    """One forward pass of the optimisation loop: which rows it holds and what the policy and value heads gave."""

    log_step: int
    ppo_epoch: int
    mini_batch: int
    micro_batch: int  # index inside the mini-batch (the gradient-accumulation index TRL files the stats under)
    indices: list[int]  # rows of the rollout batch
    logits: torch.Tensor  # [b, T, V] the policy's logits for the response tokens, not yet divided by the temperature
    vpred_full: torch.Tensor  # [b, Lq + T] the value head on every position


RECORDS = (Rollout, MicroBatch)
