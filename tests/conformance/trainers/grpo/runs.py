"""GRPO's recorded runs: tiny, fully local GRPOTrainer runs on CPU (``tiny.py``), each configured to exercise the
code paths behind the keys the pages document. ``record.py`` calls ``run`` with the interpreter of the TRL release
under test; the probes (``probes.py``) record every input of the logged metrics.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import PROMPTS, make_model, make_tokenizer, plain
from .probes import install_probes
from .records import GenBatch

CUSTOM_METRIC = "share_with_c"  # the key the third reward function logs through `log_metric` (TRL >= 1.0)


# --------------------------------------------------------------------------------------------------------------------
# Reward functions. Deterministic functions of the completion text, so that the rewards vary inside a group and the
# groups of a batch have different spreads.
# --------------------------------------------------------------------------------------------------------------------


def make_reward_funcs(
    none_steps: frozenset[int] = frozenset(), unscorable_first: str | None = None, unscorable_prompt: str | None = None
) -> list:
    """The three reward functions of a run. TRL names each after its ``__name__``.

    none_steps: optimizer steps (``trainer_state.global_step`` at generation) at which ``short_bonus`` returns None
    for every completion (an all-NaN column);
    unscorable_first: completions starting with this word get None from every function (an unscorable row);
    unscorable_prompt: every completion of this prompt gets None from every function (an unscorable group).
    """

    def unscorable(prompt, text):
        words = text.split()
        return prompt == unscorable_prompt or (
            unscorable_first is not None and bool(words) and words[0] == unscorable_first
        )

    def scores(prompts, completions, score):
        return [None if unscorable(p, c) else score(c) for p, c in zip(prompts, completions, strict=True)]

    def count_a(prompts, completions, **kwargs):
        """Number of 'a' tokens, a small integer reward."""
        return scores(prompts, completions, lambda c: float(c.split().count("a")))

    def short_bonus(prompts, completions, completion_ids, trainer_state, **kwargs):
        """1 / length, but None when the completion starts with 'b' or 'h' (or at the steps in none_steps)."""
        out = []
        for prompt, text, ids in zip(prompts, completions, completion_ids, strict=True):
            starts_b_or_h = text.split()[:1] in (["b"], ["h"])
            if trainer_state.global_step in none_steps or unscorable(prompt, text) or starts_b_or_h:
                out.append(None)
            else:
                out.append(1.0 / len(ids))
        return out

    def has_c(prompts, completions, log_metric=None, **kwargs):
        """1 if the completion contains 'c'; logs the share of such completions where TRL offers `log_metric`."""
        rewards = scores(prompts, completions, lambda c: float("c" in c.split()))
        if log_metric is not None:
            scored = [r for r in rewards if r is not None]
            log_metric(CUSTOM_METRIC, sum(scored) / max(len(scored), 1))
        return rewards

    return [count_a, short_bonus, has_c]


REWARD_WEIGHTS = [1.0, 0.5, -2.0]


# --------------------------------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------------------------------

# The settings shared by every run. They make the loss-side metrics non-trivial:
# * beta > 0 -> `kl` is logged, and it is > 0 once the policy has moved;
# * num_iterations=2 and steps_per_generation=4 > gradient_accumulation_steps=2 -> TRL computes old log-probs and the
#   importance ratio moves away from 1 (a high learning rate and a small epsilon make clipping actually happen);
# * per_device_train_batch_size=2 with num_generations=4 -> each micro-batch holds 2 rows drawn (shuffled) from a
#   generation batch of 2 prompt groups, so a micro-batch mixes groups and both rows can be low-clipped;
# * large max_grad_norm -> HF's gradient clipping never changes the gradients, the logged grad_norm is their norm.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    steps_per_generation=4,
    num_generations=4,
    num_iterations=2,
    max_completion_length=6,
    max_steps=12,
    learning_rate=0.3,
    lr_scheduler_type="linear",
    warmup_steps=1,
    beta=0.1,
    epsilon=0.05,
    epsilon_high=0.08,
    max_grad_norm=1e9,
    reward_weights=REWARD_WEIGHTS,
    logging_steps=1,
    bf16=False,
    fp16=False,
    gradient_checkpointing=False,
    use_cpu=True,
    report_to="none",
    save_strategy="no",
    disable_tqdm=True,
    seed=0,
    data_seed=0,
    dataloader_num_workers=0,
)

# name -> (first TRL release the run is recorded for, overrides of BASE_CONFIG)
RUN_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    # default loss (dapo) with every generic metric
    "main": ("0.26.0", {}),
    # logging windows of two optimizer steps, a generation every optimizer step, on-policy (TRL passes no old
    # log-probs, the ratio is exactly 1): window means over several generation batches, with an all-None reward
    # column at some steps and unscorable rows (see RUN_REWARDS), so that window means meet NaN; loss / grad_norm /
    # learning_rate over a two-step window; a sampling temperature != 1 (log-probs and entropies use scaled logits).
    "window": (
        "0.26.0",
        dict(
            logging_steps=2, steps_per_generation=2, num_iterations=1, max_steps=6, learning_rate=0.05, temperature=0.8
        ),
    ),
    # per-sequence loss normalisation ("grpo") and one std for the whole batch (`scale_rewards="batch"`): the other
    # branch of reward_std / frac_reward_zero_std, clip metrics under another loss type
    "grpo_batch": ("0.26.0", dict(loss_type="grpo", scale_rewards="batch", max_steps=4)),
    # CISPO: `cispo_clip_ratio` (ε_high is an absolute cap on the ratio there); conformance-checked from 1.0 only
    "cispo": ("1.0.0", dict(loss_type="cispo", epsilon_high=1.02, max_steps=4, scale_rewards="batch")),
    # VESPO: `vespo/phi_seq_mean` (and the other aggregation of several reward functions)
    "vespo": ("1.0.0", dict(loss_type="vespo", max_steps=4, multi_objective_aggregation="normalize_then_sum")),
    # entropy bonus with the adaptive controller (target near ln|V| so the coefficient moves up and down):
    # `policy_loss`, `entropy_coef`; loss_type "grpo" exercises the per-sequence normalisation.
    "entropy": (
        "1.8.0",
        dict(
            loss_type="grpo",
            entropy_coef=0.02,
            use_adaptive_entropy=True,
            entropy_target=2.3,
            entropy_coef_delta=0.01,
            max_steps=6,
        ),
    ),
    # a static entropy bonus with the default loss (dapo): `policy_loss`, a constant `entropy_coef`
    "entropy_dapo": ("1.8.0", dict(entropy_coef=0.01, max_steps=4)),
}

# Per-run reward function settings (see make_reward_funcs).
RUN_REWARDS: dict[str, dict[str, Any]] = {
    # an all-None column at some steps, unscorable rows, and a whole unscorable group (prompt "b", drawn at step 4)
    "window": dict(none_steps=frozenset({2, 3, 4}), unscorable_first="h", unscorable_prompt="b"),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, _) in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def run(name: str, workdir: str) -> Run:
    """Run GRPOTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    args = GRPOConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **RUN_CONFIGS[name][1]})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    reward_funcs = make_reward_funcs(**RUN_REWARDS.get(name, {}))
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=reward_funcs, args=args, train_dataset=dataset
    )
    out = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        facts={"num_prompts": len(dataset)},
    )
    install_probes(trainer, out)
    trainer.train()
    out.log_history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    out.templates = {
        "name": list(trainer.reward_func_names),  # rewards/{name}/mean
        "log_metric_name": sorted({k for g in out.of(GenBatch) for k in g.logged_metrics}),  # {log_metric_name}
    }
    out.seconds = time.perf_counter() - start
    return out
