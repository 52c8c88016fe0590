"""Probes that record, from inside an ``SFTTrainer``, every input of the keys it logs (see ``records.py``).

The same probes serve every documented release (0.11.4, 0.26.2, 1.12.0, 1.16.0): they wrap ``compute_loss`` on the
instance (HF's ``training_step`` and ``prediction_step`` call it through ``self``) and add a callback for the
optimizer steps. Before TRL's own loss runs, a plain forward with the same parameters (no labels, so no fused or
chunked head) gives the full logits the snippets start from.
"""

from __future__ import annotations

from typing import Any

import torch

from ...driver import Run
from .records import EvalBatch, MicroBatch, OptStep


def _tensor(value: Any) -> torch.Tensor | None:
    return None if value is None else torch.as_tensor(value).detach().clone()


def install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's ``compute_loss`` and add a callback so that every input of the logged keys is recorded."""
    from transformers import TrainerCallback

    counters = {"micro_steps": 0}
    orig_compute_loss = trainer.compute_loss

    def compute_loss(model, inputs, *args, **kwargs):
        training = model.training
        with torch.no_grad():
            logits = model(input_ids=inputs["input_ids"], attention_mask=inputs.get("attention_mask")).logits
        labels = _tensor(inputs["labels"])  # TRL may pop or alter the inputs
        attention_mask = _tensor(inputs.get("attention_mask"))
        input_ids = _tensor(inputs["input_ids"])
        out = orig_compute_loss(model, inputs, *args, **kwargs)
        loss = out[0] if isinstance(out, tuple) else out
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if training:
            counters["micro_steps"] += 1
            num_items = kwargs.get("num_items_in_batch", args[1] if len(args) > 1 else None)
            run.add(
                MicroBatch(
                    log_step=trainer.state.global_step + 1,
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    labels=labels,
                    logits=logits.detach().float().clone(),
                    num_items_in_batch=_tensor(num_items),
                    loss=loss.detach().clone(),
                    num_processes=int(trainer.accelerator.num_processes),
                )
            )
        else:
            run.add(
                EvalBatch(
                    log_step=trainer.state.global_step,
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    labels=labels,
                    logits=logits.detach().float().clone(),
                    loss=loss.detach().clone(),
                )
            )
        return out

    trainer.compute_loss = compute_loss

    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            loader = train_dataloader if train_dataloader is not None else trainer.get_train_dataloader()
            self.steps_in_epoch = len(loader)

        def on_pre_optimizer_step(self, args, st, control, **kw):
            grads = [p.grad.detach().clone() for p in trainer.model.parameters() if p.grad is not None]
            self.pending = {"grads": grads}

        def on_optimizer_step(self, args, st, control, **kw):
            self.pending["lr_used"] = float(trainer.lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, **kw):
            run.add(
                OptStep(
                    log_step=st.global_step,
                    grads=self.pending["grads"],
                    lr_used=self.pending["lr_used"],
                    lr_next=float(trainer.lr_scheduler.get_last_lr()[0]),
                    micro_steps_done=counters["micro_steps"],
                    steps_in_epoch=self.steps_in_epoch,
                )
            )

    trainer.add_callback(Probe())
