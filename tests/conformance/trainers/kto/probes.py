"""Probes that record, from inside a KTOTrainer, every input of the metrics it logs (see ``records.py``).

One wrapper serves every documented release (0.11.4, 0.26.2, 1.12.0, 1.16.0): ``compute_loss`` exists in all of
them and receives the collated batch, with the parameters that TRL's own forward uses in that call. The probe runs a
plain no-grad forward of the policy and of the reference model on the batch first (dropout is off: KTOConfig's
``disable_dropout`` from 0.9, the tiny model has none before), then lets TRL compute. Only the batch's key names
differ between releases: ``completion_input_ids`` / ``completion_labels`` (-100 outside the scored tokens) up to
1.5, ``input_ids`` / ``completion_mask`` from 1.6.
"""

from __future__ import annotations

from typing import Any

import torch

from ...driver import Run
from .records import MicroBatch, OptStep


def _normalised(batch: dict[str, Any], prefix: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """(input_ids, attention_mask, completion_mask) of the batch's main (prefix "") or KL ("KL_") sequences."""
    if f"{prefix}input_ids" in batch:  # TRL >= 1.6
        return (batch[f"{prefix}input_ids"], batch[f"{prefix}attention_mask"], batch[f"{prefix}completion_mask"])
    if f"{prefix}completion_input_ids" in batch:  # TRL <= 1.5: labels are -100 on the prompt and the padding
        labels = batch[f"{prefix}completion_labels"]
        return (batch[f"{prefix}completion_input_ids"], batch[f"{prefix}completion_attention_mask"],
                (labels != -100).long())
    return None


def install_probes(trainer, run: Run):
    """Wrap the trainer's ``compute_loss`` on the instance and add a callback for the optimizer steps; returns a
    function that removes the wrapper."""
    from transformers import TrainerCallback

    orig_compute_loss = trainer.compute_loss

    @torch.no_grad()
    def forward(model, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return model(input_ids=ids, attention_mask=mask).logits.detach().float().clone()

    def compute_loss(model, inputs, *args, **kwargs):
        training = bool(trainer.model.training)
        ids, attn, cmask = _normalised(inputs, "")
        kl = _normalised(inputs, "KL_") if getattr(trainer, "calculate_KL", True) else None
        ref = trainer.ref_model
        logits, ref_logits = forward(model, ids, attn), forward(ref, ids, attn)
        kl_logits = kl_ref_logits = None
        if kl is not None:
            kl_logits, kl_ref_logits = forward(model, kl[0], kl[1]), forward(ref, kl[0], kl[1])
        out = orig_compute_loss(model, inputs, *args, **kwargs)
        loss = out[0] if isinstance(out, tuple) else out
        label = inputs["label"]
        run.add(
            MicroBatch(
                log_step=trainer.state.global_step + 1,
                training=training,
                label=torch.as_tensor(label, dtype=torch.bool).clone(),
                input_ids=ids.clone(),
                attention_mask=attn.clone(),
                completion_mask=cmask.clone(),
                logits=logits,
                ref_logits=ref_logits,
                kl_input_ids=None if kl is None else kl[0].clone(),
                kl_attention_mask=None if kl is None else kl[1].clone(),
                kl_completion_mask=None if kl is None else kl[2].clone(),
                kl_logits=kl_logits,
                kl_ref_logits=kl_ref_logits,
                loss=float(loss.detach()),
            )
        )
        return out

    trainer.compute_loss = compute_loss

    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            self.steps_in_epoch = len(train_dataloader)

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
            # HF logs `_get_learning_rate()`, read right after optimizer.step(), before lr_scheduler.step()
            self.pending["lr"] = float(lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, **kw):
            run.add(OptStep(log_step=st.global_step, grads=self.pending["grads"], learning_rate=self.pending["lr"],
                            steps_in_epoch=self.steps_in_epoch))

    trainer.add_callback(Probe())

    def uninstall() -> None:
        trainer.compute_loss = orig_compute_loss

    return uninstall
