"""What KTO's probes record (``probes.py``): one record per loss call (a micro-batch, train or eval) and one per
optimizer step.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``). Every
record carries ``log_step``, the optimizer step it belongs to (``driver.Run.within`` picks a log entry's window).

The tensors are the same for every release: the batch as TRL's collator built it (its key names differ between
releases, the probe renames them), and the logits of a plain forward of the policy and of the reference model on
it, run by the probe with the parameters TRL's own forward used. The properties rebuild from them the per-token
log-probabilities, masks and per-sequence sums the pages' snippets take.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def token_logps(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """[B, L-1] log-probability of each next token: position t of the logits scores token t+1."""
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    return torch.gather(logp, -1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


@dataclass
class MicroBatch:
    """One call of ``compute_loss``: the batch, the two models' logits on it, and what TRL returned."""

    log_step: int
    training: bool
    label: torch.Tensor  # [B] bool, True for a desirable example
    input_ids: torch.Tensor  # [B, L] prompt + completion, padded as the collator padded it
    attention_mask: torch.Tensor  # [B, L]
    completion_mask: torch.Tensor  # [B, L] 1 on the completion tokens that are scored (EOS included), else 0
    logits: torch.Tensor  # [B, L, V] the policy's logits on input_ids (plain forward, no grad)
    ref_logits: torch.Tensor  # [B, L, V] the reference model's logits
    kl_input_ids: torch.Tensor | None  # [B, L'] each prompt with a completion of another row (None: no KL term)
    kl_attention_mask: torch.Tensor | None
    kl_completion_mask: torch.Tensor | None
    kl_logits: torch.Tensor | None  # [B, L', V]
    kl_ref_logits: torch.Tensor | None
    loss: float  # what compute_loss returned for the micro-batch (before the Trainer divides it for accumulation)

    @property
    def mask(self) -> torch.Tensor:
        """[B, L-1] 1 where position t predicts a completion token (the shifted completion mask)."""
        return self.completion_mask[:, 1:].float()

    @property
    def token_logps(self) -> torch.Tensor:
        """[B, L-1] policy log-probabilities of the next tokens, 0 outside the completion."""
        return token_logps(self.logits, self.input_ids) * self.mask

    @property
    def ref_token_logps(self) -> torch.Tensor:
        return token_logps(self.ref_logits, self.input_ids) * self.mask

    @property
    def logps(self) -> torch.Tensor:
        """[B] summed completion log-probability under the policy."""
        return self.token_logps.sum(-1)

    @property
    def ref_logps(self) -> torch.Tensor:
        return self.ref_token_logps.sum(-1)

    @property
    def kl_logps(self) -> torch.Tensor:
        """[B] summed log-probability of each row's mismatched completion under the policy."""
        m = self.kl_completion_mask[:, 1:].float()
        return (token_logps(self.kl_logits, self.kl_input_ids) * m).sum(-1)

    @property
    def kl_ref_logps(self) -> torch.Tensor:
        m = self.kl_completion_mask[:, 1:].float()
        return (token_logps(self.kl_ref_logits, self.kl_input_ids) * m).sum(-1)

    @property
    def shifted_logits(self) -> torch.Tensor:
        """[B, L-1, V] the logits at the positions that predict a next token."""
        return self.logits[:, :-1].float()


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step() (after HF's clipping)
    learning_rate: float  # the scheduler's value right after optimizer.step() (what HF logs)
    steps_in_epoch: int  # len(train_dataloader)


RECORDS = (MicroBatch, OptStep)
