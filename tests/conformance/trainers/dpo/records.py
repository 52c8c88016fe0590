"""What DPO's probes record (``probes.py``): one record per loss call (a micro-batch of preference pairs) and one per
optimizer step.

Plain fields and tensors only, so that a run file loads with ``weights_only=True`` (``driver.save_runs``). Every
record carries ``log_step``, the optimizer step it belongs to (``driver.Run.within`` picks a log entry's window).

Every release lays a micro-batch out the same way once the probes have read it: the ``B`` chosen sequences first, then
the ``B`` rejected ones, each row the prompt followed by its completion, padded to one width ``L``. ``mask`` marks, in
shifted coordinates, the positions ``t`` whose next token ``t + 1`` is a completion token: the logits at ``t`` predict
that token, so ``logits[:, t]`` and ``labels[:, t]`` belong together.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class MicroBatch:
    """One call of the trainer's loss on a micro-batch of ``B`` preference pairs."""

    log_step: int
    input_ids: torch.Tensor  # [2B, L] the rows the policy saw: chosen first, then rejected
    attention_mask: torch.Tensor  # [2B, L]
    logits: torch.Tensor  # [2B, L, V] the policy's logits, a plain forward with the parameters the loss saw
    ref_logits: torch.Tensor | None  # [2B, L, V] the reference model's; None when reference log-probs were precomputed
    mask: torch.Tensor  # [2B, L - 1] 1 where the token at t + 1 is a completion token (what the losses sum over)
    precomputed_ref_logps: torch.Tensor | None  # [2B] sequence sums read from the dataset (precompute_ref_log_probs)
    loss: torch.Tensor  # what the trainer's loss returned for this micro-batch
    num_pairs: int  # B

    @property
    def labels(self) -> torch.Tensor:
        """[2B, L - 1] the token each position predicts."""
        return self.input_ids[:, 1:]

    @property
    def shifted_logits(self) -> torch.Tensor:
        """[2B, L - 1, V] the logits that predict ``labels``."""
        return self.logits[:, :-1]

    def token_logps(self, ref: bool = False) -> torch.Tensor:
        """[2B, L - 1] log-probability of each next token under the policy (or the reference), 0 off the mask."""
        logits = (self.ref_logits if ref else self.logits)[:, :-1].float()
        logps = torch.log_softmax(logits, dim=-1).gather(-1, self.labels.unsqueeze(-1)).squeeze(-1)
        return logps * self.mask

    def halves(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(chosen rows, rejected rows) of a tensor laid out as [2B, ...]."""
        return t[: self.num_pairs], t[self.num_pairs :]


@dataclass
class OptStep:
    """One optimizer step of HF's Trainer."""

    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step() (after HF's clipping)
    learning_rate: float  # the rate the step used (read before the scheduler step; what transformers >= 4.47 logs)
    learning_rate_after: float  # the rate after the scheduler step (what transformers 4.46 logs)
    micro_steps_done: int  # micro-batches processed so far
    steps_in_epoch: int  # len(train_dataloader) as HF counts it


RECORDS = (MicroBatch, OptStep)
