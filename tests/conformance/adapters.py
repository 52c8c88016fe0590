"""Adapters: how each metric's reference snippet is fed from a recorded GRPOTrainer run.

``ADAPTERS`` maps a metric id (``grpo/<key>``, templates kept, e.g. ``grpo/rewards/{name}/mean``) to an
:class:`Adapter`. An adapter names the runs it uses (see ``trl_runs.RUN_CONFIGS``) and a function
``(run, log_entry) -> [(snippet kwargs, logged key or keys), ...]``. The keyword arguments follow each snippet's
signature (see the YAML's ``snippet.code``). When a snippet returns a list (one value per reward function, or per
step), the case names one logged key per element; templated keys expand with the run's reward function names.

Windows: a log entry ``step == s`` averages what was recorded for the optimizer steps after the previous entry up to
``s`` (``Run.window``; with ``logging_steps=1`` just step ``s``). Loss-side snippets take one tensor per micro-batch
of that window, generation-side snippets one tensor per generation batch of that window. A generation-side key is only
present in the entries whose window generated, so the test only compares entries that hold the key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from .trl_runs import RUN_CONFIGS, GenBatch, MicroBatch, Run

ALL_RUNS = tuple(RUN_CONFIGS)  # generation side and loss-type-independent keys
CLIP_RUNS = ("main", "entropy", "entropy_dapo", "window")  # loss types that log clip_ratio/* (dapo, grpo)
DAPO_NO_BONUS_RUNS = ("main", "window")  # default loss, no entropy bonus
BONUS_RUNS = ("entropy", "entropy_dapo")  # entropy bonus on: policy_loss, entropy_coef

Case = tuple[dict[str, Any], str | list[str]]  # one logged key, or one per element of a list result


@dataclass(frozen=True)
class Adapter:
    runs: tuple[str, ...]
    cases: Callable[[Run, dict[str, Any]], list[Case]]
    atol: float = 1e-6  # 0.0 where the snippet reproduces TRL's arithmetic bit for bit


# --------------------------------------------------------------------------------------------------------------------
# Windows and shared inputs
# --------------------------------------------------------------------------------------------------------------------


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.micro_for(entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def gens(run: Run, entry: dict[str, Any]) -> list[GenBatch]:
    gbs = run.gen_for(entry["step"])
    assert gbs, f"{run.name}: no generation batch recorded for step {entry['step']}"
    return gbs


def ratio(m: MicroBatch) -> torch.Tensor:
    """TRL's coef_1 for importance_sampling_level="token": exp(per_token_logps - old_per_token_logps)."""
    return torch.exp(m.per_token_logps - m.old_per_token_logps)


def eps_low(run: Run) -> float:
    return float(run.args.epsilon)


def eps_high(run: Run) -> float:
    return float(run.args.epsilon_high if run.args.epsilon_high is not None else run.args.epsilon)


def clip_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    w = micro(run, entry)
    return dict(ratio=[ratio(m) for m in w], advantages=[m.advantages for m in w], mask=[m.mask for m in w])


def loss_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """The tensors of TRL's policy term, one per micro-batch, and the config values it reads."""
    w = micro(run, entry)
    return dict(
        per_token_logps=[m.per_token_logps for m in w],
        old_per_token_logps=[m.old_per_token_logps for m in w],
        ref_per_token_logps=[m.ref_per_token_logps for m in w],
        advantages=[m.advantages for m in w],
        mask=[m.mask for m in w],
        num_items_in_batch=[m.num_items_in_batch for m in w],
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
        steps_per_generation=int(run.args.steps_per_generation),
        epsilon=float(run.args.epsilon),
        epsilon_high=None if run.args.epsilon_high is None else float(run.args.epsilon_high),
        beta=float(run.args.beta),
    )


# --------------------------------------------------------------------------------------------------------------------
# Loss side (one tensor per micro-batch of the window)
# --------------------------------------------------------------------------------------------------------------------


def _kl(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        per_token_logps=[m.per_token_logps for m in w],
        old_per_token_logps=[m.old_per_token_logps for m in w],
        ref_per_token_logps=[m.ref_per_token_logps for m in w],
        mask=[m.mask for m in w],
        use_bias_correction_kl=bool(run.args.use_bias_correction_kl),
        importance_sampling_level=run.args.importance_sampling_level,
    )
    return [(kwargs, "kl")]


def _entropy(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(logits=[m.logits for m in w], mask=[m.mask for m in w], temperature=float(run.args.temperature))
    return [(kwargs, "entropy")]


def _clip_low_mean(run: Run, entry: dict[str, Any]) -> list[Case]:
    return [({**clip_inputs(run, entry), "epsilon_low": eps_low(run)}, "clip_ratio/low_mean")]


def _clip_low_min(run: Run, entry: dict[str, Any]) -> list[Case]:
    return [({**clip_inputs(run, entry), "epsilon_low": eps_low(run)}, "clip_ratio/low_min")]


def _clip_high_mean(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = {**clip_inputs(run, entry), "epsilon_high": eps_high(run), "delta": run.args.delta}
    return [(kwargs, "clip_ratio/high_mean")]


def _clip_high_max(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = {**clip_inputs(run, entry), "epsilon_high": eps_high(run), "delta": run.args.delta}
    return [(kwargs, "clip_ratio/high_max")]


def _clip_region_mean(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = {
        **clip_inputs(run, entry),
        "epsilon_low": eps_low(run),
        "epsilon_high": eps_high(run),
        "delta": run.args.delta,
    }
    return [(kwargs, "clip_ratio/region_mean")]


def _loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    return [(loss_inputs(run, entry), "loss")]


def _policy_loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = {
        **loss_inputs(run, entry),
        "loss_type": run.args.loss_type,
        "max_completion_length": int(run.args.max_completion_length),
    }
    return [(kwargs, "policy_loss")]


def _entropy_coef(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        entropies=[m.entropies for m in w],
        mask=[m.mask for m in w],
        gradient_accumulation_steps=int(run.args.gradient_accumulation_steps),
        coef=w[0].entropy_coef_before,
        use_adaptive_entropy=bool(run.args.use_adaptive_entropy),
        entropy_target=float(run.args.entropy_target),
        entropy_coef_delta=float(run.args.entropy_coef_delta),
        entropy_coef_min=float(run.args.entropy_coef_min),
        entropy_coef_max=float(run.args.entropy_coef_max),
    )
    return [(kwargs, "entropy_coef")]


def _cispo_clip_ratio(run: Run, entry: dict[str, Any]) -> list[Case]:
    # TRL compares coef_1 with epsilon_high itself (an absolute cap); the cispo run sets epsilon_high=1.02
    return [({**clip_inputs(run, entry), "epsilon_high": eps_high(run)}, "cispo_clip_ratio")]


def _vespo_phi_seq_mean(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = micro(run, entry)
    kwargs = dict(
        per_token_logps=[m.per_token_logps for m in w],
        old_per_token_logps=[m.old_per_token_logps for m in w],
        advantages=[m.advantages for m in w],
        mask=[m.mask for m in w],
        k_pos=float(run.args.vespo_k_pos),
        lambda_pos=float(run.args.vespo_lambda_pos),
        k_neg=float(run.args.vespo_k_neg),
        lambda_neg=float(run.args.vespo_lambda_neg),
        importance_sampling_ratio=None,  # no vLLM
    )
    return [(kwargs, "vespo/phi_seq_mean")]


# --------------------------------------------------------------------------------------------------------------------
# Optimizer side (HF Trainer)
# --------------------------------------------------------------------------------------------------------------------


def _grad_norm(run: Run, entry: dict[str, Any]) -> list[Case]:
    last = run.opt_for(entry["step"])[-1]  # HF logs the norm of the window's last optimizer step
    # the snippet rescales the gradients in place, as clip_grad_norm_ does: give it copies
    kwargs = dict(grads=[g.clone() for g in last.grads], max_grad_norm=float(run.args.max_grad_norm))
    return [(kwargs, "grad_norm")]


def _learning_rate(run: Run, entry: dict[str, Any]) -> list[Case]:
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        max_steps=int(run.args.max_steps),
        learning_rate=float(run.args.learning_rate),
        warmup_steps=run.args.warmup_steps,
    )
    return [(kwargs, ["learning_rate"])]


def _epoch(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        num_prompts=run.num_prompts,
        num_generations=int(a.num_generations),
        per_device_train_batch_size=int(a.per_device_train_batch_size),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=1,
        steps_per_generation=int(a.steps_per_generation),
        num_iterations=int(a.num_iterations),
    )
    return [(kwargs, ["epoch"])]


# --------------------------------------------------------------------------------------------------------------------
# Generation side (one tensor per generation batch of the window)
# --------------------------------------------------------------------------------------------------------------------


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        prompt_lengths=[g.prompt_lengths for g in w],
        completion_lengths=[g.completion_lengths for g in w],
        num_input_tokens_seen=w[0].num_input_tokens_seen_before,
    )
    return [(kwargs, "num_tokens")]


def _lengths(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(dict(completion_lengths=[g.completion_lengths for g in gens(run, entry)]), key)]

    return cases


def _terminated_lengths(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        w = gens(run, entry)
        kwargs = dict(completion_lengths=[g.completion_lengths for g in w], is_truncated=[g.is_truncated for g in w])
        return [(kwargs, key)]

    return cases


def _completions_mean_length(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    return [(dict(completion_mask=[g.length_mask for g in w]), "completions/mean_length")]


def _completions_clipped_ratio(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        completion_ids=[g.padded_completion_ids for g in w],
        completion_mask=[g.length_mask for g in w],
        eos_token_ids=torch.tensor(w[0].eos_token_ids),
        pad_token_id=w[0].pad_token_id,
    )
    return [(kwargs, "completions/clipped_ratio")]


def _rewards_mean(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    keys = [f"rewards/{name}/mean" for name in run.reward_func_names]
    return [(dict(rewards_per_func=[g.rewards_per_func for g in w]), keys)]


def _rewards_std(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    keys = [f"rewards/{name}/std" for name in run.reward_func_names]
    return [(dict(rewards_per_func=[g.rewards_per_func for g in w]), keys)]


def _reward(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(rewards_per_func=[g.rewards_per_func for g in w], reward_weights=w[0].reward_weights)
    return [(kwargs, "reward")]


def _reward_std(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(rewards_per_func=[g.rewards_per_func for g in w], reward_weights=w[0].reward_weights)
    return [(kwargs, "reward_std")]


def _frac_reward_zero_std(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    kwargs = dict(
        rewards_per_func=[g.rewards_per_func for g in w],
        reward_weights=w[0].reward_weights,
        num_generations=w[0].num_generations,
        scale_rewards=run.args.scale_rewards,
        multi_objective_aggregation=run.args.multi_objective_aggregation,
    )
    return [(kwargs, "frac_reward_zero_std")]


def _log_metric_name(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    return [
        (dict(logged_values=[torch.tensor(g.logged_metrics.get(name, []), dtype=torch.float32) for g in w]), name)
        for name in run.custom_metric_names
    ]


ADAPTERS: dict[str, Adapter] = {
    # generation side: TRL's arithmetic is reproduced exactly unless noted
    "grpo/num_tokens": Adapter(ALL_RUNS, _num_tokens, atol=0.0),
    "grpo/completions/mean_length": Adapter(ALL_RUNS, _completions_mean_length, atol=0.0),
    "grpo/completions/min_length": Adapter(ALL_RUNS, _lengths("completions/min_length"), atol=0.0),
    "grpo/completions/max_length": Adapter(ALL_RUNS, _lengths("completions/max_length"), atol=0.0),
    "grpo/completions/clipped_ratio": Adapter(ALL_RUNS, _completions_clipped_ratio, atol=0.0),
    "grpo/completions/mean_terminated_length": Adapter(
        ALL_RUNS, _terminated_lengths("completions/mean_terminated_length"), atol=0.0
    ),
    "grpo/completions/min_terminated_length": Adapter(
        ALL_RUNS, _terminated_lengths("completions/min_terminated_length"), atol=0.0
    ),
    "grpo/completions/max_terminated_length": Adapter(
        ALL_RUNS, _terminated_lengths("completions/max_terminated_length"), atol=0.0
    ),
    "grpo/rewards/{name}/mean": Adapter(ALL_RUNS, _rewards_mean, atol=0.0),
    # torch.std differs from TRL's nanstd (mean of squares times n/(n-1), then sqrt) by float32 rounding only
    "grpo/rewards/{name}/std": Adapter(ALL_RUNS, _rewards_std),
    "grpo/reward": Adapter(ALL_RUNS, _reward, atol=0.0),
    "grpo/reward_std": Adapter(ALL_RUNS, _reward_std),  # torch.std vs nanstd, as above
    "grpo/frac_reward_zero_std": Adapter(ALL_RUNS, _frac_reward_zero_std, atol=0.0),
    "grpo/{log_metric_name}": Adapter(ALL_RUNS, _log_metric_name),
    # loss side: TRL's own log-probs / entropies; window means differ from TRL's float64 sum by float32 rounding
    "grpo/kl": Adapter(ALL_RUNS, _kl),
    "grpo/entropy": Adapter(ALL_RUNS, _entropy),  # recomputed from plain logits (TRL uses a fused LM head)
    "grpo/clip_ratio/low_mean": Adapter(CLIP_RUNS, _clip_low_mean),
    "grpo/clip_ratio/high_mean": Adapter(CLIP_RUNS, _clip_high_mean),
    "grpo/clip_ratio/region_mean": Adapter(CLIP_RUNS, _clip_region_mean),
    # min / max of per-completion fractions: the same float32 arithmetic as TRL, so exact
    "grpo/clip_ratio/low_min": Adapter(CLIP_RUNS, _clip_low_min, atol=0.0),
    "grpo/clip_ratio/high_max": Adapter(CLIP_RUNS, _clip_high_max, atol=0.0),
    "grpo/cispo_clip_ratio": Adapter(("cispo",), _cispo_clip_ratio),
    "grpo/vespo/phi_seq_mean": Adapter(("vespo",), _vespo_phi_seq_mean),
    "grpo/policy_loss": Adapter(BONUS_RUNS, _policy_loss),
    "grpo/entropy_coef": Adapter(BONUS_RUNS, _entropy_coef, atol=0.0),
    # HF Trainer
    "grpo/loss": Adapter(DAPO_NO_BONUS_RUNS, _loss),
    "grpo/grad_norm": Adapter(ALL_RUNS, _grad_norm, atol=0.0),  # same per-parameter norms, then their norm
    "grpo/learning_rate": Adapter(ALL_RUNS, _learning_rate, atol=0.0),
    "grpo/epoch": Adapter(ALL_RUNS, _epoch, atol=0.0),
}
