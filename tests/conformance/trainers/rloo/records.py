"""What RLOO's probes record (``probes.py``).

Two trainers share the name: the GRPO-style ``RLOOTrainer`` of TRL 0.22 and later (one record per generation batch,
per loss call and per optimizer step) and the PPO-style ``RLOOTrainer`` of TRL 0.9.2 to 0.21 (one record per update,
the rollout, and one per optimisation micro-batch). Plain fields and tensors only, so that a run file loads with
``weights_only=True`` (``driver.save_runs``). Every record carries ``log_step``, the optimizer step (GRPO-style) or
the update (PPO-style) it belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

INVALID_LOGPROB = 1.0  # the PPO-style trainer's fill value for log-probabilities after the end of a response


# --------------------------------------------------------------------------------------------------------------------
# GRPO-style RLOOTrainer (TRL >= 0.22)
# --------------------------------------------------------------------------------------------------------------------


@dataclass
class GenBatch:
    """One call of ``_generate_and_score_completions``: the completions, their scores and the KL penalty."""

    log_step: int
    prompt_ids: list[list[int]]  # as ``_generate`` returned them
    completion_ids: list[list[int]]
    rewards_per_func: torch.Tensor  # [N, F] as ``_calculate_rewards`` returned it (all processes), NaN for None
    reward_weights: torch.Tensor  # [F]
    reward_func_names: list[str]
    num_generations: int
    completion_mask: torch.Tensor  # [N, T] the mask TRL used (zero rows for truncated completions when masked)
    old_per_token_logps: torch.Tensor  # [N, T] the sampling policy's log-probs, computed right after generation
    ref_per_token_logps: torch.Tensor | None  # [N, T] the reference model's (None with beta=0)
    advantages: torch.Tensor  # [N] what TRL handed to the loss (all processes)
    logged_metrics: dict[str, list[float]]  # values reward functions passed to ``log_metric`` (TRL >= 1.0), by name
    num_input_tokens_seen_before: int
    num_input_tokens_seen: int
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
        """[N, T] 1 up to and including EOS, 0 on padding (before any masking of truncated completions)."""
        lengths = self.completion_lengths
        width = int(lengths.max())
        return (torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)).long()

    @property
    def padded_completion_ids(self) -> torch.Tensor:
        width = max(len(ids) for ids in self.completion_ids)
        return torch.tensor([ids + [self.pad_token_id] * (width - len(ids)) for ids in self.completion_ids])

    @property
    def is_truncated(self) -> torch.Tensor:
        stop = set(self.eos_token_ids) | {self.pad_token_id}
        return torch.tensor([ids[-1] not in stop for ids in self.completion_ids])


@dataclass
class MicroBatch:
    """One call of ``_compute_loss``: the inputs the loss saw and what TRL computed from them."""

    log_step: int
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor
    advantages: torch.Tensor  # [B]
    old_logps: torch.Tensor  # [B] sequence log-probs of the sampling policy (masked sums)
    per_token_logps: torch.Tensor  # [B, T] TRL's own values from this forward
    entropies: torch.Tensor  # [B, T]
    logits: torch.Tensor  # [B, T, V] unscaled logits predicting each completion token (a plain forward, same params)
    loss: torch.Tensor  # what _compute_loss returned (not yet divided by gradient_accumulation_steps)
    num_processes: int


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step() (after HF's clipping)
    learning_rate: float
    optimizer_step_index: int
    micro_steps_done: int
    steps_in_epoch: int


# --------------------------------------------------------------------------------------------------------------------
# PPO-style RLOOTrainer (TRL 0.9.2 to 0.21)
# --------------------------------------------------------------------------------------------------------------------


def first_true_indices(bools: torch.Tensor) -> torch.Tensor:
    """Per row, the index of the first True, or the row length when there is none."""
    width = bools.shape[-1]
    return torch.where(bools.any(-1), bools.float().argmax(-1), torch.full_like(bools[..., 0], width, dtype=torch.long))


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


@dataclass
class Rollout:
    """One update of the PPO-style trainer: the k samples of each prompt, their scores and the KL penalty."""

    log_step: int
    queries: torch.Tensor  # [B, Lq] the prompts repeated rloo_k times (block after block)
    query_responses: torch.Tensor  # [B, Lq + T]
    gen_logits: torch.Tensor  # [B, T, V] the generation scores (already divided by the temperature)
    ref_logits: torch.Tensor  # [B, T, V] the reference model's logits, not yet divided by the temperature
    scores: torch.Tensor  # [B] the reward model's scores, before the missing-EOS penalty
    permutations: list[list[int]]  # the row order of each PPO epoch
    clock: list[float]  # time.time() at the start of train() and when the update computed `eps`
    episode: int
    lr: float
    rloo_k: int
    kl_coef: float
    missing_eos_penalty: float | None
    eos_token_id: int
    pad_token_id: int
    stop_token_id: int | None
    temperature: float
    num_processes: int

    @property
    def context_length(self) -> int:
        return int(self.queries.shape[1])

    @property
    def responses(self) -> torch.Tensor:
        return self.query_responses[:, self.context_length :]

    @property
    def postprocessed_responses(self) -> torch.Tensor:
        r = self.responses
        if self.stop_token_id is None:
            return r
        first = first_true_indices(r == self.stop_token_id)
        idx = torch.arange(r.shape[1]).unsqueeze(0)
        return torch.masked_fill(r, idx > first.unsqueeze(1), self.pad_token_id)

    @property
    def padding_mask(self) -> torch.Tensor:
        """[B, T] True after the last real token."""
        lengths = first_true_indices(self.postprocessed_responses == self.pad_token_id) - 1
        return torch.arange(self.responses.shape[1]).unsqueeze(0) > lengths.unsqueeze(1)

    @property
    def logprobs(self) -> torch.Tensor:
        """[B, T] the sampling policy's log-probs, INVALID_LOGPROB after the end (as TRL fills them)."""
        return torch.masked_fill(token_logprobs(self.gen_logits, self.responses), self.padding_mask, INVALID_LOGPROB)

    @property
    def ref_logprobs(self) -> torch.Tensor:
        lp = token_logprobs(self.ref_logits / (self.temperature + 1e-7), self.responses)
        return torch.masked_fill(lp, self.padding_mask, INVALID_LOGPROB)

    @property
    def contain_eos_token(self) -> torch.Tensor:
        """[B] whether the truncated response holds the EOS token (what the missing-EOS penalty tests)."""
        return (self.postprocessed_responses == self.eos_token_id).any(-1)

    @property
    def penalized_scores(self) -> torch.Tensor:
        """[B] the scores after the missing-EOS penalty (what `objective/scores` averages)."""
        s = self.scores.clone()
        if self.missing_eos_penalty is not None:
            s[~self.contain_eos_token] -= self.missing_eos_penalty
        return s

    @property
    def rlhf_reward(self) -> torch.Tensor:
        """[B] penalized score minus kl_coef times the summed k1 (0 on padding, where both log-probs are 1.0)."""
        kl = self.logprobs - self.ref_logprobs
        return self.penalized_scores + (-self.kl_coef * kl).sum(1)

    @property
    def advantages(self) -> torch.Tensor:
        """[B] the leave-one-out advantages (rows are rloo_k blocks of the same prompts)."""
        r = self.rlhf_reward.reshape(self.rloo_k, -1)
        baseline = (r.sum(0) - r) / (self.rloo_k - 1)
        return (r - baseline).flatten()


@dataclass
class PPOMicroBatch:
    """One forward pass of the PPO-style optimisation loop."""

    log_step: int
    ppo_epoch: int
    mini_batch: int
    micro_batch: int
    indices: list[int]  # rows of the rollout batch
    logits: torch.Tensor  # [b, T, V] the policy's logits for the response tokens, not yet divided by the temperature


RECORDS = (GenBatch, MicroBatch, OptStep, Rollout, PPOMicroBatch)
