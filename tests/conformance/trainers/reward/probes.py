"""Probes that record, from inside a ``RewardTrainer``, every input of the keys it logs (see ``records.py``).

The same probes serve every documented release: they wrap ``compute_loss`` on the instance (HF's ``training_step``
and ``prediction_step`` call it through ``self``) and add a callback for the optimizer steps. Before TRL's own loss
runs, a no-grad forward with the same parameters scores the chosen and rejected sequences: one forward over the
stacked batch from TRL 0.24 (``input_ids``: chosen rows, then rejected rows), two before (``input_ids_chosen``,
``input_ids_rejected``).
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ...driver import Run
from .records import EvalBatch, MicroBatch, OptStep


def _scores(model, inputs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(rewards_chosen [B], rewards_rejected [B], attention_mask) of a batch, as the reward model scores it."""
    with torch.no_grad():
        if "input_ids" in inputs:  # TRL >= 0.24: chosen and rejected rows in one padded batch
            logits = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]).logits
            chosen, rejected = torch.chunk(logits.squeeze(-1).float(), chunks=2)
            return chosen, rejected, inputs["attention_mask"].detach().clone()
        chosen = model(input_ids=inputs["input_ids_chosen"], attention_mask=inputs["attention_mask_chosen"]).logits
        rejected = model(
            input_ids=inputs["input_ids_rejected"], attention_mask=inputs["attention_mask_rejected"]
        ).logits
        masks = [inputs["attention_mask_chosen"], inputs["attention_mask_rejected"]]
        width = max(m.shape[1] for m in masks)
        mask = torch.cat([torch.nn.functional.pad(m, (0, width - m.shape[1])) for m in masks])
        return chosen.squeeze(-1).float(), rejected.squeeze(-1).float(), mask.detach().clone()


def install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's ``compute_loss`` and add a callback so that every input of the logged keys is recorded."""
    from transformers import TrainerCallback

    counters = {"micro_steps": 0, "printing": False}
    orig_compute_loss = trainer.compute_loss
    takes_num_items = "num_items_in_batch" in inspect.signature(orig_compute_loss).parameters

    def compute_loss(model, inputs, return_outputs=False, num_items_in_batch=None):
        training = model.training
        chosen, rejected, mask = _scores(model, inputs)
        margin = inputs.get("margin")
        margin = None if margin is None else torch.as_tensor(margin).detach().clone().float()
        if takes_num_items:
            out = orig_compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)
        else:  # TRL < 0.12 predates the argument that transformers >= 4.46 passes
            out = orig_compute_loss(model, inputs, return_outputs=return_outputs)
        loss = (out[0] if isinstance(out, tuple) else out).detach().clone()
        if counters["printing"]:  # TRL < 0.24 prints sample scores before evaluating, with the model in train mode
            return out
        if training:
            counters["micro_steps"] += 1
            steps = getattr(trainer, "current_gradient_accumulation_steps", trainer.args.gradient_accumulation_steps)
            run.add(MicroBatch(trainer.state.global_step + 1, chosen, rejected, margin, mask, loss, int(steps)))
        else:
            run.add(EvalBatch(trainer.state.global_step, chosen, rejected, margin, mask, loss))
        return out

    trainer.compute_loss = compute_loss

    if hasattr(trainer, "visualize_samples"):
        orig_visualize = trainer.visualize_samples

        def visualize_samples(*args, **kwargs):
            counters["printing"] = True
            try:
                return orig_visualize(*args, **kwargs)
            finally:
                counters["printing"] = False

        trainer.visualize_samples = visualize_samples

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
