"""Probes for a legacy ``PPOTrainer`` (TRL 0.7.10 - 0.11.4): wrappers on the trainer instance and on the names its
module looks up at call time, recording every input of the logged statistics (``records.py``) without changing what
TRL computes.

* ``step`` numbers the calls (``log_step``); ``batched_forward_pass`` tells the rollout passes (policy, then reference)
  from the mini-batch passes by their order inside ``step``, and always keeps the logits (TRL computes them anyway);
* ``compute_rewards``, ``compute_advantages`` and ``loss`` record their inputs and outputs;
* a fake clock replaces the module's ``time``: it stands still except inside instrumented calls, each of which
  advances it by a known, distinct amount, so every ``time/ppo/*`` value is a sum of known costs (``Timing``);
* ``log_stats`` runs its W&B branch with a stand-in ``wandb`` module whose ``Table`` only keeps columns and rows
  (``GameLog``), and the accelerator's ``log`` is replaced by a function that appends the dict it receives to the
  run's ``log_history``: legacy PPO has no ``Trainer.state.log_history``, this is its equivalent.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import sys
import types
from collections.abc import Iterator
from typing import Any

import torch

from ...driver import Run
from .records import GameLog, KLUpdate, MiniBatch, Rollout, Timing

# seconds the fake clock advances per call of each instrumented piece of work (powers of two: any sum is exact)
COST = {
    "collate": 2.0**-10,
    "policy_forward": 2.0**-9,
    "ref_forward": 2.0**-8,
    "full_log_softmax": 2.0**-11,
    "compute_rewards": 2.0**-7,
    "compute_advantages": 2.0**-6,
    "minibatch_forward": 2.0**-5,
    "train_minibatch": 2.0**-4,
    "stack_dicts": 2.0**-3,
    "record_step_stats": 2.0**-2,
    "stats_to_np": 2.0**-1,
    "kl_update": 2.0**0,
    "convert_to_scalar": 2.0**1,
    "lr_scheduler_step": 2.0**2,
}


class FakeClock:
    """Stands in for the ``time`` module inside ``trl.trainer.ppo_trainer``."""

    def __init__(self) -> None:
        self.now = 1000.0

    def time(self) -> float:
        return self.now


def _plain(value: Any) -> Any:
    """A logged value as plain floats and lists (numpy arrays and scalars, tensors)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    return float(value)


class _Table:
    """What ``log_stats`` builds with ``wandb.Table``: its columns and rows, nothing else."""

    def __init__(self, columns: list[str], rows: list[list]) -> None:
        self.columns, self.rows = list(columns), [list(r) for r in rows]


@contextlib.contextmanager
def _fake_wandb() -> Iterator[None]:
    module = types.ModuleType("wandb")
    module.__spec__ = importlib.machinery.ModuleSpec("wandb", None)
    module.Table = _Table
    saved = sys.modules.get("wandb")
    sys.modules["wandb"] = module
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("wandb", None)
        else:
            sys.modules["wandb"] = saved


def _clone(x: Any) -> Any:
    return x.detach().clone().cpu() if isinstance(x, torch.Tensor) else x


@contextlib.contextmanager
def install_probes(trainer, out: Run) -> Iterator[None]:
    """Record ``trainer``'s statistics inputs into ``out`` while the context is open (module patches undone after)."""
    import trl.trainer.ppo_trainer as module

    clock = FakeClock()
    state: dict[str, Any] = {"step": 0, "forward_calls": 0}

    def spend(phase: str) -> None:
        cost = COST[phase]
        clock.now += cost
        state["timing"].work.setdefault(phase, []).append(cost)

    def wrap_method(obj, name, before=None, after=None):
        original = getattr(obj, name)

        def wrapper(*args, **kwargs):
            if before is not None:
                args, kwargs = before(*args, **kwargs)
            result = original(*args, **kwargs)
            return after(result, *args, **kwargs) if after is not None else result

        setattr(obj, name, wrapper)

    # --- step(): numbering, raw scores, learning rate ------------------------------------------------------------
    original_step = trainer.step

    def step(queries, responses, scores, response_masks=None):
        state["step"] += 1
        state["forward_calls"] = 0
        state["timing"] = Timing(log_step=state["step"], work={})
        state["rollout"] = dict(
            log_step=state["step"],
            queries=[q.tolist() for q in queries],
            responses=[r.tolist() for r in responses],
            raw_scores=torch.stack([torch.as_tensor(s, dtype=torch.float32) for s in scores]).cpu(),
            learning_rate=float(trainer.optimizer.param_groups[0]["lr"]),
        )
        stats = original_step(queries, responses, scores, response_masks)
        out.add(state["timing"])
        return stats

    trainer.step = step

    # --- the forward passes ---------------------------------------------------------------------------------------
    original_forward = trainer.batched_forward_pass

    def batched_forward_pass(model, queries, responses, model_inputs, return_logits=False, response_masks=None):
        state["forward_calls"] += 1
        call = state["forward_calls"]
        logprobs, logits, values, masks = original_forward(
            model, queries, responses, model_inputs, return_logits=True, response_masks=response_masks
        )
        r = state["rollout"]
        if call == 1:
            spend("policy_forward")
            r.update(logits=_clone(logits), logprobs=_clone(logprobs), values=_clone(values), masks=_clone(masks))
        elif call == 2:
            spend("ref_forward")
            r.update(ref_logits=_clone(logits), ref_logprobs=_clone(logprobs))
        else:
            spend("minibatch_forward")
        return logprobs, (logits if return_logits else None), values, masks

    trainer.batched_forward_pass = batched_forward_pass

    def collate_before(queries, responses):
        spend("collate")
        return (queries, responses), {}

    def collate_after(result, queries, responses):
        state["rollout"].update(input_ids=_clone(result["input_ids"]), attention_mask=_clone(result["attention_mask"]))
        return result

    wrap_method(trainer, "prepare_model_inputs", collate_before, collate_after)

    # --- rewards and advantages -----------------------------------------------------------------------------------
    def rewards_before(scores, logprobs, ref_logprobs, masks):
        spend("compute_rewards")
        state["rollout"].update(scores=_clone(scores), kl_coef=float(trainer.kl_ctl.value))
        return (scores, logprobs, ref_logprobs, masks), {}

    def rewards_after(result, *args):
        rewards, non_score_reward, kls = result
        state["rollout"].update(rewards=_clone(rewards), non_score_reward=_clone(non_score_reward), kls=_clone(kls))
        return result

    wrap_method(trainer, "compute_rewards", rewards_before, rewards_after)

    def advantages_before(values, rewards, mask):
        spend("compute_advantages")
        return (values, rewards, mask), {}

    def advantages_after(result, *args):
        _, advantages, returns = result
        state["rollout"].update(advantages=_clone(advantages), returns=_clone(returns))
        return result

    wrap_method(trainer, "compute_advantages", advantages_before, advantages_after)

    # --- the mini-batch updates -----------------------------------------------------------------------------------
    def train_before(*args, **kwargs):
        spend("train_minibatch")
        return args, kwargs

    wrap_method(trainer, "train_minibatch", train_before)

    def loss_before(old_logprobs, values, logits, vpreds, logprobs, mask, advantages, returns):
        out.add(MiniBatch(log_step=state["step"], old_logprobs=_clone(old_logprobs), values=_clone(values),
                          logits=_clone(logits), vpreds=_clone(vpreds), logprobs=_clone(logprobs), mask=_clone(mask),
                          advantages=_clone(advantages), returns=_clone(returns)))
        return (old_logprobs, values, logits, vpreds, logprobs, mask, advantages, returns), {}

    wrap_method(trainer, "loss", loss_before)

    # --- statistics, controller, scheduler ------------------------------------------------------------------------
    def timed(phase):
        def before(*args, **kwargs):
            spend(phase)
            return args, kwargs

        return before

    wrap_method(trainer, "record_step_stats", timed("record_step_stats"))

    def kl_update_before(current, n_steps):
        spend("kl_update")
        state["kl_before"] = float(trainer.kl_ctl.value)
        return (current, n_steps), {}

    def kl_update_after(result, current, n_steps):
        out.add(KLUpdate(log_step=state["step"], value_before=state["kl_before"], current=float(current),
                         n_steps=int(n_steps), value_after=float(trainer.kl_ctl.value)))
        return result

    wrap_method(trainer.kl_ctl, "update", kl_update_before, kl_update_after)
    if trainer.lr_scheduler is not None:
        wrap_method(trainer.lr_scheduler, "step", timed("lr_scheduler_step"))

    # --- log_stats: W&B branch with a stand-in table, the accelerator's log captured ------------------------------
    def log(values, step=None, log_kwargs=None):
        entry = {"step": state["step"]}
        for key, value in values.items():
            if isinstance(value, _Table):
                out.add(GameLog(log_step=state["step"], columns=value.columns, rows=value.rows))
                value = [row[-1] for row in value.rows]  # the reward column: the only numbers of the table
            entry[key] = _plain(value)
        out.log_history.append(entry)

    trainer.accelerator.log = log
    original_log_stats = trainer.log_stats

    def log_stats(stats, batch, rewards, columns_to_log=("query", "response")):
        state["rollout"]["env_rewards"] = torch.stack([torch.as_tensor(r, dtype=torch.float32) for r in rewards])
        out.add(Rollout(**state["rollout"]))
        log_with = trainer.config.log_with
        trainer.config.log_with = "wandb"
        try:
            with _fake_wandb():
                return original_log_stats(stats, batch, rewards, columns_to_log)
        finally:
            trainer.config.log_with = log_with

    trainer.log_stats = log_stats

    patched = {}
    for name, phase in (("stack_dicts", "stack_dicts"), ("stats_to_np", "stats_to_np"),
                        ("convert_to_scalar", "convert_to_scalar")):
        fn = getattr(module, name)
        patched[name] = fn

        def make(fn=fn, phase=phase):
            def wrapper(*args, **kwargs):
                spend(phase)
                return fn(*args, **kwargs)

            return wrapper

        setattr(module, name, make())
    # the two vocabulary-wide log-softmaxes of kl_penalty="full" (gather=False) run inside the compute_rewards timer
    gathered_logprobs = module.logprobs_from_logits
    patched["logprobs_from_logits"] = gathered_logprobs

    def logprobs_from_logits(logits, labels, gather=True):
        if not gather:
            spend("full_log_softmax")
        return gathered_logprobs(logits, labels, gather)

    module.logprobs_from_logits = logprobs_from_logits
    patched["time"] = module.time
    module.time = clock
    try:
        yield
    finally:
        for name, fn in patched.items():
            setattr(module, name, fn)
