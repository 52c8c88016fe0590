"""Probes that record, from inside a GRPOTrainer, every input of the metrics it logs (see ``records.py``).

The same probes serve every documented release (0.26.2, 1.12.0, 1.16.0): they wrap methods all of them have
(``_generate``, ``_calculate_rewards``, ``_generate_and_score_completions``, ``_get_per_token_logps_and_entropies``,
``_compute_loss``) and read the newer attributes only where they exist (``_log_metric`` from 1.0, the entropy
controller from 1.8, ``eos_token_ids`` from 1.14.2).
"""

from __future__ import annotations

from typing import Any

import torch

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep


def install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's methods on the instance so that every input of the logged metrics is recorded."""
    from transformers import TrainerCallback

    state: dict[str, Any] = {"gen": None, "capture_logps": False, "logps": None}
    tokenizer = getattr(trainer, "_tokenizer", None) or trainer.processing_class  # `_tokenizer` from TRL 1.3
    # several EOS ids (tokenizer + generation config) from TRL 1.14.2; before, the tokenizer's one
    eos_token_ids = list(getattr(trainer, "eos_token_ids", None) or [tokenizer.eos_token_id])
    has_entropy_controller = hasattr(trainer, "entropy_coef")  # TRL >= 1.8

    # --- generation side --------------------------------------------------------------------------------------------
    orig_generate = trainer._generate

    def _generate(prompts):
        out = orig_generate(prompts)
        state["gen"] = {"prompt_ids": [list(p) for p in out[0]], "completion_ids": [list(c) for c in out[1]]}
        return out

    orig_rewards = trainer._calculate_rewards

    def _calculate_rewards(inputs, prompts, completions, completion_ids_list):
        rewards_per_func = orig_rewards(inputs, prompts, completions, completion_ids_list)
        state["gen"]["rewards_per_func"] = rewards_per_func.detach().clone()
        state["gen"]["completions"] = [str(c) for c in completions]
        return rewards_per_func

    orig_gas = trainer._generate_and_score_completions

    def _generate_and_score_completions(inputs):
        log_step = trainer.state.global_step + 1
        seen_before = int(trainer.state.num_input_tokens_seen)
        out = orig_gas(inputs)
        g = state["gen"]
        run.add(
            GenBatch(
                log_step=log_step,
                prompt_ids=g["prompt_ids"],
                completion_ids=g["completion_ids"],
                completions=g["completions"],
                rewards_per_func=g["rewards_per_func"],
                reward_weights=trainer.reward_weights.detach().clone().float(),
                reward_func_names=list(trainer.reward_func_names),
                num_generations=int(trainer.num_generations),
                advantages=out["advantages"].detach().clone(),
                num_items_in_batch=torch.as_tensor(out["num_items_in_batch"]).detach().clone(),
                completion_mask=out["completion_mask"].detach().clone(),
                logged_metrics=g.get("logged", {}),
                num_input_tokens_seen_before=seen_before,
                num_input_tokens_seen=int(trainer.state.num_input_tokens_seen),
                eos_token_ids=eos_token_ids,
                pad_token_id=int(tokenizer.pad_token_id),
            )
        )
        state["gen"] = None
        return out

    if hasattr(trainer, "_log_metric"):  # reward functions' own metrics, TRL >= 1.0
        orig_log_metric = trainer._log_metric

        def _log_metric(name, value):
            state["gen"].setdefault("logged", {}).setdefault(name, []).append(float(value))
            return orig_log_metric(name, value)

        trainer._log_metric = _log_metric

    # --- loss side --------------------------------------------------------------------------------------------------
    orig_logps = trainer._get_per_token_logps_and_entropies

    def _get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args, **kwargs):
        out = orig_logps(model, input_ids, attention_mask, logits_to_keep, *args, **kwargs)
        if state["capture_logps"] and kwargs.get("compute_entropy"):  # a 2-tuple before TRL 1.7, a 3-tuple after
            state["logps"] = (out[0].detach().clone(), out[1].detach().clone())
        return out

    orig_compute_loss = trainer._compute_loss

    def _compute_loss(model, inputs):
        log_step = trainer.state.global_step + 1
        coef_before = float(trainer.entropy_coef) if has_entropy_controller else None
        last_world_before = float(trainer._last_world_entropy) if has_entropy_controller else None
        sync = bool(trainer.accelerator.sync_gradients)
        # A plain forward with the parameters the loss sees (before this step's update): the unscaled logits that
        # predict each completion token.
        with torch.no_grad():
            input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            width = inputs["completion_ids"].size(1)
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -width - 1 : -1, :]
        state["capture_logps"], state["logps"] = True, None
        try:
            loss = orig_compute_loss(model, inputs)
        finally:
            state["capture_logps"] = False
        logps, ents = state["logps"]

        def grab(name):
            value = inputs.get(name)
            return None if value is None else torch.as_tensor(value).detach().clone()

        run.add(
            MicroBatch(
                log_step=log_step,
                prompt_ids=grab("prompt_ids"),
                prompt_mask=grab("prompt_mask"),
                completion_ids=grab("completion_ids"),
                completion_mask=grab("completion_mask"),
                advantages=grab("advantages"),
                per_token_logps=logps,
                entropies=ents,
                logits=logits.detach().clone(),
                old_per_token_logps_input=grab("old_per_token_logps"),
                ref_per_token_logps=grab("ref_per_token_logps"),
                num_items_in_batch=grab("num_items_in_batch"),
                loss=loss.detach().clone(),
                gradient_accumulation_steps=int(trainer.current_gradient_accumulation_steps),
                steps_per_generation=int(trainer.args.steps_per_generation),
                num_processes=int(trainer.accelerator.num_processes),
                sync_gradients=sync,
                entropy_coef_before=coef_before,
                entropy_coef_after=float(trainer.entropy_coef) if has_entropy_controller else None,
                last_world_entropy_before=last_world_before,
            )
        )
        return loss

    trainer._generate = _generate
    trainer._calculate_rewards = _calculate_rewards
    trainer._generate_and_score_completions = _generate_and_score_completions
    trainer._get_per_token_logps_and_entropies = _get_per_token_logps_and_entropies
    trainer._compute_loss = _compute_loss

    # --- optimizer side ---------------------------------------------------------------------------------------------
    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            self.steps_in_epoch = len(train_dataloader)

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
            # HF logs `_get_learning_rate()` read right after optimizer.step(), before lr_scheduler.step()
            self.pending["lr"] = float(lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, **kw):
            run.add(
                OptStep(
                    log_step=st.global_step,
                    grads=self.pending["grads"],
                    learning_rate=self.pending["lr"],
                    optimizer_step_index=st.global_step - 1,
                    micro_steps_done=trainer._step,
                    steps_in_epoch=self.steps_in_epoch,
                )
            )

    trainer.add_callback(Probe())
