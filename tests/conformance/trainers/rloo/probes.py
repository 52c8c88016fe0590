"""Probes that record, from inside an ``RLOOTrainer``, every input of the keys it logs (``records.py``).

GRPO-style trainer (TRL >= 0.22): the probes wrap methods every documented release has (``_generate``,
``_calculate_rewards``, ``_get_per_token_logps_and_entropies``, ``_generate_and_score_completions``,
``_compute_loss``) on the instance, and read newer attributes only where they exist (``_log_metric`` from 1.0,
``eos_token_ids`` from 1.14.2).

PPO-style trainer (TRL 0.9.2 to 0.21): ``train()`` keeps its tensors in local variables but reaches them through
helpers it looks up in its own module at call time (``batch_generation``, ``forward``, ``get_reward``,
``np.random.permutation``, ``time.time``); the probes wrap those names in that module and put them back afterwards.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import torch

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep, PPOMicroBatch, Rollout

# --------------------------------------------------------------------------------------------------------------------
# GRPO-style trainer
# --------------------------------------------------------------------------------------------------------------------


def install_probes(trainer, run: Run) -> Callable[[], None]:
    """Wrap the trainer's methods on the instance so that every input of the logged keys is recorded."""
    from transformers import TrainerCallback

    state: dict[str, Any] = {"gen": None, "in_gen": False, "in_loss": False, "logps": None}
    tokenizer = getattr(trainer, "_tokenizer", None) or trainer.processing_class
    eos_token_ids = list(getattr(trainer, "eos_token_ids", None) or [tokenizer.eos_token_id])

    orig_generate = trainer._generate

    def _generate(prompts, *a, **kw):
        out = orig_generate(prompts, *a, **kw)
        state["gen"].update(prompt_ids=[list(p) for p in out[0]], completion_ids=[list(c) for c in out[1]])
        return out

    orig_rewards = trainer._calculate_rewards

    def _calculate_rewards(inputs, prompts, completions, completion_ids_list):
        rewards_per_func = orig_rewards(inputs, prompts, completions, completion_ids_list)
        state["gen"]["rewards_per_func"] = rewards_per_func.detach().clone()
        return rewards_per_func

    orig_logps = trainer._get_per_token_logps_and_entropies

    def _get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *a, **kw):
        out = orig_logps(model, input_ids, attention_mask, logits_to_keep, *a, **kw)
        if state["in_gen"]:  # the sampling policy first, then the reference model
            slot = "ref" if model is trainer.ref_model else "old"
            state["gen"][slot] = out[0].detach().clone()
        elif state["in_loss"] and kw.get("compute_entropy"):
            state["logps"] = (out[0].detach().clone(), out[1].detach().clone())
        return out

    orig_gas = trainer._generate_and_score_completions

    def _generate_and_score_completions(inputs):
        log_step = trainer.state.global_step + 1
        seen_before = int(trainer.state.num_input_tokens_seen)
        state["gen"], state["in_gen"] = {}, True
        try:
            out = orig_gas(inputs)
        finally:
            state["in_gen"] = False
        g = state["gen"]
        run.add(
            GenBatch(
                log_step=log_step,
                prompt_ids=g["prompt_ids"],
                completion_ids=g["completion_ids"],
                rewards_per_func=g["rewards_per_func"],
                reward_weights=trainer.reward_weights.detach().clone().float(),
                reward_func_names=list(trainer.reward_func_names),
                num_generations=int(trainer.num_generations),
                completion_mask=out["completion_mask"].detach().clone(),
                old_per_token_logps=g["old"],
                ref_per_token_logps=g.get("ref"),
                advantages=out["advantages"].detach().clone(),
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

    orig_compute_loss = trainer._compute_loss

    def _compute_loss(model, inputs):
        log_step = trainer.state.global_step + 1
        with torch.no_grad():  # the unscaled logits that predict each completion token, same parameters
            input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            width = inputs["completion_ids"].size(1)
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -width - 1 : -1, :]
        state["in_loss"], state["logps"] = True, None
        try:
            loss = orig_compute_loss(model, inputs)
        finally:
            state["in_loss"] = False
        logps, ents = state["logps"]
        run.add(
            MicroBatch(
                log_step=log_step,
                completion_ids=inputs["completion_ids"].detach().clone(),
                completion_mask=inputs["completion_mask"].detach().clone(),
                advantages=inputs["advantages"].detach().clone(),
                old_logps=inputs["old_logps"].detach().clone(),
                per_token_logps=logps,
                entropies=ents,
                logits=logits.detach().clone().float(),
                loss=loss.detach().clone(),
                num_processes=int(trainer.accelerator.num_processes),
            )
        )
        return loss

    trainer._generate = _generate
    trainer._calculate_rewards = _calculate_rewards
    trainer._get_per_token_logps_and_entropies = _get_per_token_logps_and_entropies
    trainer._generate_and_score_completions = _generate_and_score_completions
    trainer._compute_loss = _compute_loss

    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            self.steps_in_epoch = len(train_dataloader)

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
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
    return lambda: None


# --------------------------------------------------------------------------------------------------------------------
# PPO-style trainer
# --------------------------------------------------------------------------------------------------------------------


class _Clock:
    """Stands in for the module's ``time``: records what ``time.time()`` returned."""

    def __init__(self, real: types.ModuleType, calls: list[float]):
        self._real, self._calls = real, calls

    def time(self) -> float:
        now = self._real.time()
        self._calls.append(now)
        return now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _NumPy:
    """Stands in for the module's ``np``: records each ``np.random.permutation`` (one per PPO epoch)."""

    def __init__(self, real: types.ModuleType, calls: list[list[int]]):
        self._real = real
        outer = self

        class _Random:
            def permutation(self, n):
                out = real.random.permutation(n)
                calls.append([int(i) for i in out])
                return out

            def __getattr__(self, name):
                return getattr(outer._real.random, name)

        self.random = _Random()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


WRAPPED = ("batch_generation", "forward", "get_reward", "time", "np")


def install_legacy_probes(trainer, run: Run) -> Callable[[], None]:
    """Wrap the helpers of the PPO-style trainer's module; return the function that puts them back."""
    from transformers import TrainerCallback

    module = inspect.getmodule(type(trainer).train)
    originals = {name: getattr(module, name) for name in WRAPPED}
    args = trainer.args
    tokenizer = getattr(trainer, "processing_class", None) or trainer.tokenizer
    state: dict[str, Any] = {"clock": [], "perms": [], "rollout": None, "forward": 0}

    def batch_generation(model, queries, *a, **kw):
        query_responses, logits = originals["batch_generation"](model, queries, *a, **kw)
        state["rollout"] = {
            "queries": queries.detach().clone(),
            "query_responses": query_responses.detach().clone(),
            "gen_logits": logits.detach().clone().float(),
            "ref_logits": [],
            "scores": [],
        }
        state["perms"].clear()
        state["forward"] = 0
        return query_responses, logits

    def forward(model, query_responses, pad_token_id):
        out = originals["forward"](model, query_responses, pad_token_id)
        r = state["rollout"]
        ctx = r["queries"].shape[1]
        logits = out.logits[:, ctx - 1 : -1].detach().clone().float()  # before TRL divides them in place
        if model is trainer.ref_policy:
            r["ref_logits"].append(logits)
        else:
            n = state["forward"]
            state["forward"] += 1
            per_mini = args.local_mini_batch_size // args.per_device_train_batch_size
            epoch, rest = divmod(n, args.num_mini_batches * per_mini)
            mini, micro = divmod(rest, per_mini)
            start = mini * args.local_mini_batch_size + micro * args.per_device_train_batch_size
            indices = state["perms"][epoch][start : start + args.per_device_train_batch_size]
            if not torch.equal(query_responses, r["query_responses"][indices]):
                raise AssertionError(f"micro-batch {n}: rows {indices} are not the rows TRL fed to forward()")
            run.add(
                PPOMicroBatch(
                    log_step=trainer.state.global_step + 1,
                    ppo_epoch=epoch,
                    mini_batch=mini,
                    micro_batch=micro,
                    indices=list(indices),
                    logits=logits,
                )
            )
        return out

    def get_reward(model, query_responses, pad_token_id, context_length):
        out = originals["get_reward"](model, query_responses, pad_token_id, context_length)
        state["rollout"]["scores"].append(out[1].detach().clone().float())
        return out

    module.batch_generation = batch_generation
    module.forward = forward
    module.get_reward = get_reward
    module.time = _Clock(originals["time"], state["clock"])
    module.np = _NumPy(originals["np"], state["perms"])

    class Probe(TrainerCallback):
        def on_log(self, a, st, control, logs=None, **kw):
            r = state["rollout"]
            if r is None or "episode" not in (logs or {}):
                return
            run.add(
                Rollout(
                    log_step=st.global_step,
                    queries=r["queries"],
                    query_responses=r["query_responses"],
                    gen_logits=r["gen_logits"],
                    ref_logits=torch.cat(r["ref_logits"]),
                    scores=torch.cat(r["scores"]),
                    permutations=[list(p) for p in state["perms"]],
                    clock=[state["clock"][0], state["clock"][-1]],
                    episode=int(st.episode),
                    lr=float(trainer.lr_scheduler.get_last_lr()[0]),
                    rloo_k=int(args.rloo_k),
                    kl_coef=float(args.kl_coef),
                    missing_eos_penalty=None if args.missing_eos_penalty is None else float(args.missing_eos_penalty),
                    eos_token_id=int(tokenizer.eos_token_id),
                    pad_token_id=int(tokenizer.pad_token_id),
                    stop_token_id=None if args.stop_token_id is None else int(args.stop_token_id),
                    temperature=float(args.temperature),
                    num_processes=int(trainer.accelerator.num_processes),
                )
            )

    trainer.add_callback(Probe())

    def uninstall() -> None:
        for name, value in originals.items():
            setattr(module, name, value)

    return uninstall
