"""Adapters: how each metric's reference snippet is fed from a recorded GRPOTrainer run, per TRL release; and the
keys whose snippets must tell an older release from the latest one.

``ADAPTERS[trl_release]`` maps a metric id (``grpo/<key>``, templates kept, e.g. ``grpo/rewards/{name}/mean``) to a
``driver.Adapter``. An adapter names the runs it uses (``runs.RUN_CONFIGS``) and a function
``(run, log_entry) -> [(inputs, logged key or keys), ...]``. ``inputs`` offers everything TRL's computation of the
key reads, by the names the snippets use; each snippet receives the inputs its signature names, so the snippets of
two releases can differ in what they need (the 0.26 ``reward_std`` needs ``num_generations``, the 1.16 one does
not) and still be fed by one adapter. A snippet parameter without a default that no input provides is an error.
When a snippet returns a list (one value per reward function, or per step), the case names one logged key per
element; templated keys expand with the run's reward function names (``Run.templates``).

Windows: a log entry ``step == s`` averages what was recorded for the optimizer steps after the previous entry up to
``s`` (``Run.within``; with ``logging_steps=1`` just step ``s``). Loss-side snippets take one tensor per micro-batch
of that window, generation-side snippets one tensor per generation batch of that window. A generation-side key is only
present in the entries whose window generated, so the test only compares entries that hold the key.

A metric a release logs but has no adapter for here must say ``conformance.checked: false`` for that release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import GenBatch, MicroBatch, OptStep

# transformers 4.x rounds the logged `loss` to 4 decimals (trainer.py:3205 in 4.57.6): half a unit of the 4th
# decimal, on top of the float32 slack of the other loss-side keys
ROUNDED_LOSS_ATOL = 5e-5 + 1e-6


# --------------------------------------------------------------------------------------------------------------------
# Windows and shared inputs
# --------------------------------------------------------------------------------------------------------------------


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def gens(run: Run, entry: dict[str, Any]) -> list[GenBatch]:
    gbs = run.within(GenBatch, entry["step"])
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
        use_bias_correction_kl=bool(run.args.use_bias_correction_kl),
        loss_type=run.args.loss_type,
        max_completion_length=int(run.args.max_completion_length),
    )


def reward_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """The scores of the window's generation batches and how TRL combines them."""
    w = gens(run, entry)
    return dict(
        rewards_per_func=[g.rewards_per_func for g in w],
        reward_weights=w[0].reward_weights,
        num_generations=w[0].num_generations,
        scale_rewards=run.args.scale_rewards,
        # the only behaviour before the option existed (TRL 0.27)
        multi_objective_aggregation=getattr(run.args, "multi_objective_aggregation", "sum_then_normalize"),
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
    kwargs = dict(
        logits=[m.logits for m in w],
        entropies=[m.entropies for m in w],
        mask=[m.mask for m in w],
        temperature=float(run.args.temperature),
    )
    return [(kwargs, "entropy")]


def _clip(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        kwargs = {
            **clip_inputs(run, entry),
            "epsilon_low": eps_low(run),
            "epsilon_high": eps_high(run),
            "delta": run.args.delta,
        }
        return [(kwargs, key)]

    return cases


def _loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    return [(loss_inputs(run, entry), "loss")]


def _policy_loss(run: Run, entry: dict[str, Any]) -> list[Case]:
    return [(loss_inputs(run, entry), "policy_loss")]


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
    last = run.within(OptStep, entry["step"])[-1]  # HF logs the norm of the window's last optimizer step
    # the snippet rescales the gradients in place, as clip_grad_norm_ does: the test hands it copies
    return [(dict(grads=last.grads, max_grad_norm=float(run.args.max_grad_norm)), "grad_norm")]


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
        num_prompts=run.facts["num_prompts"],
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


def _completions(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        w = gens(run, entry)
        kwargs = dict(
            completion_lengths=[g.completion_lengths for g in w],
            completion_mask=[g.length_mask for g in w],
            completion_ids=[g.padded_completion_ids for g in w],
            is_truncated=[g.is_truncated for g in w],
            eos_token_ids=torch.tensor(w[0].eos_token_ids),
            eos_token_id=w[0].eos_token_ids[0],
            pad_token_id=w[0].pad_token_id,
        )
        return [(kwargs, key)]

    return cases


def _rewards_per_function(stat: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        keys = [f"rewards/{name}/{stat}" for name in run.templates["name"]]
        return [(dict(rewards_per_func=[g.rewards_per_func for g in gens(run, entry)]), keys)]

    return cases


def _reward_key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(reward_inputs(run, entry), key)]

    return cases


def _log_metric_name(run: Run, entry: dict[str, Any]) -> list[Case]:
    w = gens(run, entry)
    return [
        (dict(logged_values=[torch.tensor(g.logged_metrics.get(name, []), dtype=torch.float32) for g in w]), name)
        for name in run.templates["log_metric_name"]
    ]


# --------------------------------------------------------------------------------------------------------------------
# Per release
# --------------------------------------------------------------------------------------------------------------------

COMPLETION_KEYS = (
    "mean_length",
    "min_length",
    "max_length",
    "clipped_ratio",
    "mean_terminated_length",
    "min_terminated_length",
    "max_terminated_length",
)
CLIP_KEYS = ("low_mean", "high_mean", "region_mean", "low_min", "high_max")


def _common(all_runs: tuple[str, ...], clip_runs: tuple[str, ...], loss_runs: tuple[str, ...]) -> dict[str, Adapter]:
    """The keys every documented release logs and the harness checks, with the runs that log them there."""
    return {
        # generation side: TRL's arithmetic is reproduced exactly unless noted
        "grpo/num_tokens": Adapter(all_runs, _num_tokens, atol=0.0),
        **{
            f"grpo/completions/{k}": Adapter(all_runs, _completions(f"completions/{k}"), atol=0.0)
            for k in COMPLETION_KEYS
        },
        "grpo/rewards/{name}/mean": Adapter(all_runs, _rewards_per_function("mean"), atol=0.0),
        # torch.std differs from TRL's nanstd (mean of squares times n/(n-1), then sqrt) by float32 rounding only
        "grpo/rewards/{name}/std": Adapter(all_runs, _rewards_per_function("std")),
        "grpo/reward": Adapter(all_runs, _reward_key("reward"), atol=0.0),
        "grpo/reward_std": Adapter(all_runs, _reward_key("reward_std")),  # torch.std vs nanstd, as above
        "grpo/frac_reward_zero_std": Adapter(all_runs, _reward_key("frac_reward_zero_std"), atol=0.0),
        # loss side: TRL's own log-probs; window means differ from TRL's float64 sum by float32 rounding
        "grpo/kl": Adapter(all_runs, _kl),
        "grpo/entropy": Adapter(all_runs, _entropy),
        # (before 1.9, low_min / high_max are per-process fractions averaged over micro-batches like the means)
        **{f"grpo/clip_ratio/{k}": Adapter(clip_runs, _clip(f"clip_ratio/{k}")) for k in CLIP_KEYS},
        # HF Trainer
        "grpo/loss": Adapter(loss_runs, _loss),
        "grpo/grad_norm": Adapter(all_runs, _grad_norm, atol=0.0),  # same per-parameter norms, then their norm
        "grpo/learning_rate": Adapter(all_runs, _learning_rate, atol=0.0),
        "grpo/epoch": Adapter(all_runs, _epoch, atol=0.0),
    }


# TRL 1.x (1.12.0 and 1.16.0 record the same runs with the same probes)
V1_RUNS = ("main", "window", "grpo_batch", "cispo", "vespo", "entropy", "entropy_dapo")
V1_CLIP_RUNS = ("main", "window", "grpo_batch", "entropy", "entropy_dapo")  # loss types dapo and grpo
V1 = {
    **_common(V1_RUNS, clip_runs=V1_CLIP_RUNS, loss_runs=("main", "window")),  # default loss (dapo), no bonus
    # min / max of per-completion fractions (TRL >= 1.9): the same float32 arithmetic as TRL, so exact
    "grpo/clip_ratio/low_min": Adapter(V1_CLIP_RUNS, _clip("clip_ratio/low_min"), atol=0.0),
    "grpo/clip_ratio/high_max": Adapter(V1_CLIP_RUNS, _clip("clip_ratio/high_max"), atol=0.0),
    "grpo/{log_metric_name}": Adapter(V1_RUNS, _log_metric_name),
    "grpo/cispo_clip_ratio": Adapter(("cispo",), _cispo_clip_ratio),
    "grpo/vespo/phi_seq_mean": Adapter(("vespo",), _vespo_phi_seq_mean),
    "grpo/policy_loss": Adapter(("entropy", "entropy_dapo"), _policy_loss),
    "grpo/entropy_coef": Adapter(("entropy", "entropy_dapo"), _entropy_coef, atol=0.0),
}

# TRL 0.26.2: the generic keys (no log_metric, entropy bonus or VESPO yet; CISPO is not checked on 0.26)
V026_RUNS = ("main", "window", "grpo_batch")
V026 = _common(V026_RUNS, clip_runs=V026_RUNS, loss_runs=("main", "window"))
V026["grpo/loss"] = replace(V026["grpo/loss"], atol=ROUNDED_LOSS_ATOL)

ADAPTERS: dict[str, dict[str, Adapter]] = {"1.16.0": V1, "1.12.0": V1, "0.26.2": V026}

# Keys whose value TRL computes differently in an older site line than in the latest one, in a way these
# single-process runs show (other changes, such as per-process vs. global means, only show with several processes).
# The older release's snippet must reproduce its runs and fail on the latest release's runs, and the other way round.
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "grpo/reward_std": "mean of per-group stds (0.26) vs. weighted std of the whole batch (>= 0.27)",
        "grpo/reward": "unscorable completions count as reward 0 (< 1.6) vs. left out (>= 1.6)",
        "grpo/frac_reward_zero_std": "a group of unscorable completions has std 0 (< 1.6: rewards 0) vs. no std and "
        "is not counted (>= 1.6)",
        "grpo/rewards/{name}/mean": "a NaN in the logging window makes it NaN (< 1.0) vs. is dropped (>= 1.0)",
        "grpo/rewards/{name}/std": "a NaN in the logging window makes it NaN (< 1.0) vs. is dropped (>= 1.0)",
        "grpo/clip_ratio/low_min": "per-process fraction (< 1.9) vs. per-completion fraction (>= 1.9)",
        "grpo/clip_ratio/high_max": "per-process fraction (< 1.9) vs. per-completion fraction (>= 1.9)",
        "grpo/loss": "DAPO normaliser not rescaled by steps_per_generation / GA (< 1.9.1), k3 not multiplied by "
        "the ratio (bias correction off by default before 1.10)",
    },
}
