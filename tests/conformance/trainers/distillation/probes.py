"""Probes that record, from inside a DistillationTrainer, every input of the metrics it logs (see ``records.py``).

They wrap methods both documented releases have with the same signature (``_generate(prompts)`` and
``_compute_loss(unwrapped_student, inputs, num_items_in_batch)``) and read ``eos_token_ids`` where it exists
(TRL >= 1.14.2).
"""

from __future__ import annotations

from typing import Any

import torch

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep


def install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's methods on the instance so that every input of the logged metrics is recorded."""
    from transformers import TrainerCallback

    tokenizer = trainer._tokenizer
    eos_token_ids = list(getattr(trainer, "eos_token_ids", None) or [tokenizer.eos_token_id])

    orig_generate = trainer._generate

    def _generate(prompts):
        log_step = trainer.state.global_step + 1
        seen_before = int(trainer.state.num_input_tokens_seen)
        out = orig_generate(prompts)
        run.add(
            GenBatch(
                log_step=log_step,
                prompt_ids=[list(p) for p in out[0]],
                completion_ids=[list(c) for c in out[1]],
                num_input_tokens_seen_before=seen_before,
                num_input_tokens_seen=int(trainer.state.num_input_tokens_seen),
                eos_token_ids=eos_token_ids,
                pad_token_id=int(tokenizer.pad_token_id),
            )
        )
        return out

    orig_compute_loss = trainer._compute_loss

    def _compute_loss(unwrapped_student, inputs, num_items_in_batch):
        log_step = trainer.state.global_step + 1
        input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
        attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
        width = inputs["completion_ids"].size(1)
        with torch.no_grad():  # plain forwards with the parameters the loss sees (before this step's update)
            student = unwrapped_student(input_ids=input_ids, attention_mask=attention_mask).logits
            teacher = trainer.teacher_model(input_ids=input_ids, attention_mask=attention_mask).logits
        mask = inputs["completion_mask"]
        if "tool_mask" in inputs:
            mask = mask * inputs["tool_mask"]
        out = orig_compute_loss(unwrapped_student, inputs, num_items_in_batch)
        run.add(
            MicroBatch(
                log_step=log_step,
                completion_ids=inputs["completion_ids"].detach().clone(),
                mask=mask.detach().clone(),
                student_logits=student[:, -width - 1 : -1, :].detach().clone(),
                teacher_logits=teacher[:, -width - 1 : -1, :].detach().clone(),
                num_items_in_batch=torch.as_tensor(inputs["num_items_in_batch"]).detach().clone(),
                loss=out[0].detach().clone(),
                num_processes=int(trainer.accelerator.num_processes),
            )
        )
        return out

    trainer._generate = _generate
    trainer._compute_loss = _compute_loss

    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
            # HF logs `_get_learning_rate()` read right after optimizer.step(), before lr_scheduler.step()
            self.pending["lr"] = float(lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, **kw):
            run.add(OptStep(log_step=st.global_step, grads=self.pending["grads"], learning_rate=self.pending["lr"]))

    trainer.add_callback(Probe())
