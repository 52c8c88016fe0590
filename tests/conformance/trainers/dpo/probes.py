"""Probes that record, from inside a DPOTrainer, every input of the metrics it logs (see ``records.py``).

One probe serves every documented release. It wraps ``compute_loss`` (all releases have it) and, for the length of
the call, a forward hook on the policy that sees the rows TRL feeds it: after the call, a plain no-grad forward of
the policy and of the reference model on exactly those rows gives the logits (TRL 1.15+ never builds them: its
fused LM head returns per-token statistics only). Which tokens are completion tokens is read from the batch, in the
layout of each release: ``completion_mask`` (0.29+), prompt and completion lengths after TRL's flush to the left
(0.14 - 0.28), or ``*_labels`` with ``-100`` outside the completion (<= 0.13).
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ...driver import Run
from .records import MicroBatch, OptStep


def _plain_logits(module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return module(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits.detach().float()


def _mask(inputs: dict[str, Any], input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """[2B, L - 1]: 1 where the next token is a completion token, in the layout TRL fed the policy."""
    width = input_ids.size(1)
    if "completion_mask" in inputs:  # 0.29+: the collator marks the completion
        return inputs["completion_mask"][:, 1:].long()
    if "chosen_labels" in inputs:  # <= 0.13: labels are -100 on the prompt and on padding
        labels = [inputs[f"{side}_labels"] for side in ("chosen", "rejected")]
        labels = [torch.nn.functional.pad(x, (0, width - x.size(1)), value=-100) for x in labels]
        return (torch.cat(labels)[:, 1:] != -100).long()
    # 0.14 - 0.28: rows are flushed left, so row i holds its prompt at [0, p) and its completion at [p, p + c)
    prompt = inputs["prompt_attention_mask"].sum(1)
    prompt = torch.cat([prompt, prompt])
    completion = torch.cat([inputs[f"{side}_attention_mask"].sum(1) for side in ("chosen", "rejected")])
    assert torch.equal(attention_mask.sum(1), prompt + completion), "rows are not prompt + completion"
    nxt = torch.arange(1, width).unsqueeze(0)
    return ((nxt >= prompt.unsqueeze(1)) & (nxt < (prompt + completion).unsqueeze(1))).long()


def _precomputed(inputs: dict[str, Any]) -> torch.Tensor | None:
    for prefix in ("ref", "reference"):  # `reference_*` until 0.13, `ref_*` after
        if f"{prefix}_chosen_logps" in inputs:
            return torch.cat([inputs[f"{prefix}_chosen_logps"], inputs[f"{prefix}_rejected_logps"]]).detach().float()
    return None


def install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's ``compute_loss`` on the instance and add a callback for the optimizer steps."""
    from transformers import TrainerCallback

    policy = trainer.accelerator.unwrap_model(trainer.model)
    orig_compute_loss = trainer.compute_loss
    # TRL <= 0.11 has no `num_items_in_batch` argument, which transformers >= 4.46 passes (always None for DPO's
    # batches, which have no `labels`): drop it there, as a transformers release of TRL 0.11's time would not pass it
    takes_items = "num_items_in_batch" in inspect.signature(orig_compute_loss).parameters
    count = {"micro": 0}

    def compute_loss(model, inputs, *args, **kwargs):
        log_step = trainer.state.global_step + 1
        seen: list[tuple[torch.Tensor, torch.Tensor]] = []

        def hook(module, args, kw, output):
            ids = args[0] if args else kw["input_ids"]
            if not seen:  # the first policy forward is the one the loss uses
                seen.append((ids.detach().clone(), kw["attention_mask"].detach().clone()))

        if not takes_items:
            kwargs.pop("num_items_in_batch", None)
        handle = policy.register_forward_hook(hook, with_kwargs=True)
        try:
            loss = orig_compute_loss(model, inputs, *args, **kwargs)
        finally:
            handle.remove()
        input_ids, attention_mask = seen[0]
        precomputed = _precomputed(inputs)
        ref = trainer.ref_model
        run.add(
            MicroBatch(
                log_step=log_step,
                input_ids=input_ids,
                attention_mask=attention_mask,
                logits=_plain_logits(policy, input_ids, attention_mask),
                ref_logits=None if precomputed is not None else _plain_logits(ref, input_ids, attention_mask),
                mask=_mask(inputs, input_ids, attention_mask),
                precomputed_ref_logps=precomputed,
                loss=(loss[0] if isinstance(loss, tuple) else loss).detach().clone().float(),
                num_pairs=input_ids.size(0) // 2,
            )
        )
        count["micro"] += 1
        return loss

    trainer.compute_loss = compute_loss

    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            self.steps_in_epoch = len(train_dataloader) if train_dataloader is not None else 0

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
            # the rate the step used: read after optimizer.step(), before lr_scheduler.step()
            self.pending["lr"] = float(lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, lr_scheduler=None, **kw):
            run.add(
                OptStep(
                    log_step=st.global_step,
                    grads=self.pending["grads"],
                    learning_rate=self.pending["lr"],
                    learning_rate_after=float(lr_scheduler.get_last_lr()[0]),
                    micro_steps_done=count["micro"],
                    steps_in_epoch=self.steps_in_epoch,
                )
            )

    trainer.add_callback(Probe())
