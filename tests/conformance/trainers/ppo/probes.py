"""Probes that record, from inside a PPO trainer's ``train()``, every input of the keys it logs (``records.py``).

``train()`` keeps its tensors in local variables, but it reaches them through helpers it looks up in its own module
at call time: ``batch_generation`` (the rollout and its generation scores), ``forward`` (the reference model, and the
policy + value model in the optimisation loop), ``get_reward`` (the value model during the rollout, and the reward
model), ``masked_whiten`` (the GAE advantages, and the rewards with ``whiten_rewards=True``), ``np.random.permutation``
(each PPO epoch's row order) and ``time.time`` (`eps`). The probes wrap those names in that module, so the same
probes serve PPOv2Trainer (0.11) and PPOTrainer (0.26 to 1.12): every one of these helpers keeps its name and
arguments across the releases.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import torch

from ...driver import Run
from .records import MicroBatch, Rollout


class _Clock:
    """Stands in for the module's ``time``: records what ``time.time()`` returned while recording is on."""

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


WRAPPED = ("batch_generation", "forward", "get_reward", "masked_whiten", "time", "np")


def install_probes(trainer, run: Run) -> Callable[[], None]:
    """Wrap the helpers of the trainer's module so that every input of the logged metrics is recorded; return the
    function that puts the module's own helpers back (the next run of the same process must not see these)."""
    module = inspect.getmodule(type(trainer).train)
    originals = {name: getattr(module, name) for name in WRAPPED}
    args = trainer.args
    tokenizer = getattr(trainer, "processing_class", None) or trainer.tokenizer
    # where TRL truncates: `trainer.stop_token_id` from 0.14, `args.stop_token_id` (set from stop_token) before
    stop_token_id = getattr(trainer, "stop_token_id", args.stop_token_id)
    state: dict[str, Any] = {"clock": [], "perms": [], "rollout": None, "forward": 0}

    orig_batch_generation = module.batch_generation

    def batch_generation(model, queries, *a, **kw):
        query_responses, logits = orig_batch_generation(model, queries, *a, **kw)
        state["rollout"] = {
            "queries": queries.detach().clone(),
            "query_responses": query_responses.detach().clone(),
            "gen_logits": logits.detach().clone().float(),
            "ref_logits": [],
            "values_full": [],
            "scores": [],
            "rewards_whitened": None,
        }
        state["perms"].clear()
        state["forward"] = 0
        return query_responses, logits

    orig_forward = module.forward

    def forward(model, query_responses, pad_token_id):
        out = orig_forward(model, query_responses, pad_token_id)
        r = state["rollout"]
        ctx = r["queries"].shape[1]
        if isinstance(out, tuple):  # the optimisation loop: PolicyAndValueWrapper gives (policy output, values)
            output, vpred = out
            _micro_batch(query_responses, output.logits[:, ctx - 1 : -1], vpred.squeeze(-1))
        else:  # the reference model during the rollout (TRL divides these logits in place afterwards)
            r["ref_logits"].append(out.logits[:, ctx - 1 : -1].detach().clone().float())
        return out

    def _micro_batch(query_responses, logits, vpred_full):
        r = state["rollout"]
        n = state["forward"]
        state["forward"] += 1
        per_mini = -(-args.local_mini_batch_size // args.per_device_train_batch_size)
        epoch, rest = divmod(n, args.num_mini_batches * per_mini)
        mini, micro = divmod(rest, per_mini)
        order = state["perms"][epoch]
        start = mini * args.local_mini_batch_size + micro * args.per_device_train_batch_size
        end = min(start + args.per_device_train_batch_size, (mini + 1) * args.local_mini_batch_size)
        indices = order[start:end]
        if not torch.equal(query_responses, r["query_responses"][indices]):
            raise AssertionError(f"micro-batch {n}: rows {indices} are not the rows TRL fed to forward()")
        run.add(
            MicroBatch(
                log_step=trainer.state.global_step + 1,
                ppo_epoch=epoch,
                mini_batch=mini,
                micro_batch=micro,
                indices=list(indices),
                logits=logits.detach().clone().float(),
                vpred_full=vpred_full.detach().clone().float(),
            )
        )

    orig_get_reward = module.get_reward

    def get_reward(model, query_responses, pad_token_id, context_length):
        out = orig_get_reward(model, query_responses, pad_token_id, context_length)
        r = state["rollout"]
        if model is trainer.reward_model:
            r["scores"].append(out[1].detach().clone().float())
        else:  # the value model
            r["values_full"].append(out[0].squeeze(-1).detach().clone().float())
        return out

    orig_whiten = module.masked_whiten

    def masked_whiten(values, mask, shift_mean=True):
        out = orig_whiten(values, mask, shift_mean=shift_mean)
        r = state["rollout"]
        if shift_mean:  # the advantages
            r["advantages_gae"] = values.detach().clone().float()
            r["advantages_whitened"] = out.detach().clone().float()
        else:  # the rewards (whiten_rewards=True)
            r["rewards_whitened"] = out.detach().clone().float()
        return out

    module.batch_generation = batch_generation
    module.forward = forward
    module.get_reward = get_reward
    module.masked_whiten = masked_whiten
    module.time = _Clock(module.time, state["clock"])
    module.np = _NumPy(module.np, state["perms"])

    # --- when the update has logged: file the rollout ---------------------------------------------------------------
    from transformers import TrainerCallback

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
                    values_full=torch.cat(r["values_full"]),
                    scores=torch.cat(r["scores"]),
                    advantages_gae=r["advantages_gae"],
                    advantages_whitened=r["advantages_whitened"],
                    rewards_whitened=r["rewards_whitened"],
                    permutations=[list(p) for p in state["perms"]],
                    clock=[state["clock"][0], state["clock"][-1]],
                    episode=int(st.episode),
                    lr=float(trainer.lr_scheduler.get_last_lr()[0]),
                    eos_token_id=int(tokenizer.eos_token_id),
                    pad_token_id=int(tokenizer.pad_token_id),
                    stop_token_id=None if stop_token_id is None else int(stop_token_id),
                    temperature=float(args.temperature),
                    num_processes=int(trainer.accelerator.num_processes),
                )
            )

    trainer.add_callback(Probe())

    def uninstall() -> None:
        for name, value in originals.items():
            setattr(module, name, value)

    return uninstall
