"""RLOO's recorded runs: tiny, fully local ``RLOOTrainer`` runs on CPU (``tiny.py``).

From TRL 0.22 the trainer is GRPO-style (reward functions, groups of ``num_generations`` completions, a leave-one-out
baseline); TRL 0.11.4, the release of the 0.11 line, has the PPO-style trainer of 0.9.2 to 0.21 (a reward model,
``rloo_k`` samples per prompt, PPO epochs over each batch). ``runs_for`` picks the runs that fit the release;
``record.py`` calls ``run`` with the interpreter of the release under test.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import PROMPTS, make_model, make_tokenizer, plain
from .probes import install_legacy_probes, install_probes
from .records import GenBatch

GRPO_STYLE = "0.22.0"  # the first release with the GRPO-style trainer
CUSTOM_METRIC = "share_with_c"  # the key the third reward function logs through `log_metric` (TRL >= 1.0)


# --------------------------------------------------------------------------------------------------------------------
# GRPO-style trainer: reward functions of the completion text, so that groups disagree and some rows are unscorable
# --------------------------------------------------------------------------------------------------------------------


def make_reward_funcs(none_steps: frozenset[int] = frozenset(), unscorable_first: str | None = None) -> list:
    """Three reward functions, named by their ``__name__``.

    none_steps: optimizer steps at which ``inverse_length`` returns None for every completion (an all-NaN column);
    unscorable_first: completions starting with this word get None from every function (an unscorable row).
    """

    def skip(text):
        words = text.split()
        return unscorable_first is not None and bool(words) and words[0] == unscorable_first

    def count_a(prompts, completions, **kwargs):
        """Number of 'a' tokens."""
        return [None if skip(c) else float(c.split().count("a")) for c in completions]

    def inverse_length(prompts, completions, completion_ids, trainer_state, **kwargs):
        """1 / length; None for completions that start with 'b' (and for all at the steps in none_steps)."""
        out = []
        for text, ids in zip(completions, completion_ids, strict=True):
            if trainer_state.global_step in none_steps or skip(text) or text.split()[:1] == ["b"]:
                out.append(None)
            else:
                out.append(1.0 / len(ids))
        return out

    def has_c(prompts, completions, log_metric=None, **kwargs):
        """1 if the completion holds a 'c'; logs the share of such completions where TRL offers `log_metric`."""
        rewards = [None if skip(c) else float("c" in c.split()) for c in completions]
        if log_metric is not None:
            scored = [r for r in rewards if r is not None]
            log_metric(CUSTOM_METRIC, sum(scored) / max(len(scored), 1))
        return rewards

    return [count_a, inverse_length, has_c]


REWARD_WEIGHTS = [1.0, 0.5, -2.0]

# Settings shared by every GRPO-style run:
# * beta > 0 -> the KL penalty enters the rewards and `kl` is logged;
# * num_iterations=2 and steps_per_generation=4 > gradient_accumulation_steps=2 -> each batch is optimised twice, the
#   sequence-level ratio moves away from 1 and (with a high learning rate and small epsilons) both clips bind;
# * 2 rows per micro-batch drawn from 2 groups of 4: a micro-batch mixes groups;
# * a huge max_grad_norm -> HF never rescales the gradients, grad_norm is their norm.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    steps_per_generation=4,
    num_generations=4,
    num_iterations=2,
    max_completion_length=6,
    max_steps=8,
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

# name -> overrides of BASE_CONFIG
RUN_CONFIGS: dict[str, dict[str, Any]] = {
    "main": {},
    # windows of two optimizer steps with a generation at every step, on-policy; rewards clipped, advantages
    # normalised, truncated completions masked out; a sampling temperature != 1; an all-None reward column at some
    # steps and unscorable rows (RUN_REWARDS)
    "window": dict(
        logging_steps=2,
        steps_per_generation=2,
        num_iterations=1,
        max_steps=6,
        learning_rate=0.05,
        temperature=0.8,
        reward_clip_range=(-1.0, 1.5),
        normalize_advantages=True,
        mask_truncated_completions=True,
    ),
}
# inverse_length returns None for every completion generated at global_step 2 (optimizer step 3), so the window of
# steps 3-4 holds one all-NaN column next to a scored one
RUN_REWARDS: dict[str, dict[str, Any]] = {"window": dict(none_steps=frozenset({2}), unscorable_first="h")}


# --------------------------------------------------------------------------------------------------------------------
# PPO-style trainer (TRL 0.9.2 to 0.21)
# --------------------------------------------------------------------------------------------------------------------

EXTRA_PROMPTS = ["a a b", "c", "d f h", "e g b c"]  # 12 prompts: every pass drops some (drop_last)

LEGACY_BASE: dict[str, Any] = dict(
    response_length=6,
    stop_token="eos",
    missing_eos_penalty=1.0,
    temperature=0.9,
    kl_coef=0.1,
    num_sample_generations=0,
    learning_rate=0.01,
    lr_scheduler_type="linear",
    bf16=False,
    fp16=False,
    gradient_checkpointing=False,
    use_cpu=True,
    report_to="none",
    save_strategy="no",
    disable_tqdm=True,
    seed=0,
    dataloader_num_workers=0,
)

LEGACY_CONFIGS: dict[str, dict[str, Any]] = {
    # 2 samples per prompt, 2 PPO epochs x 2 mini-batches x 2 micro-batches over 8 rows; 3 updates
    "legacy_main": dict(
        rloo_k=2,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=2,
        num_mini_batches=2,
        num_ppo_epochs=2,
        total_episodes=24,
    ),
    # one stats cell (val/ratio_var is NaN), 4 samples per prompt, no stop token (responses run to response_length
    # and may hold several EOS), a warm-up update at learning rate 0
    "legacy_one_cell": dict(
        rloo_k=4,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=1,
        num_mini_batches=1,
        num_ppo_epochs=1,
        total_episodes=24,
        stop_token=None,
        response_length=8,
        warmup_steps=1,
        kl_coef=0.3,
    ),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return list(RUN_CONFIGS if Version(trl_version) >= Version(GRPO_STYLE) else LEGACY_CONFIGS)


def run(name: str, workdir: str) -> Run:
    """Run RLOOTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    return _run_legacy(name, workdir) if name in LEGACY_CONFIGS else _run(name, workdir)


def _run(name: str, workdir: str) -> Run:
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import RLOOConfig, RLOOTrainer

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    args = RLOOConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **RUN_CONFIGS[name]})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    trainer = RLOOTrainer(
        model=model,
        processing_class=tok,
        reward_funcs=make_reward_funcs(**RUN_REWARDS.get(name, {})),
        args=args,
        train_dataset=dataset,
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
        "name": list(trainer.reward_func_names),
        "log_metric_name": sorted({k for g in out.of(GenBatch) for k in g.logged_metrics}),
    }
    out.seconds = time.perf_counter() - start
    return out


def _reward_model(policy, seed: int):
    """A LlamaForSequenceClassification with the policy's shape and one label (TRL's get_reward needs `score`)."""
    import torch
    from transformers import LlamaForSequenceClassification

    torch.manual_seed(seed)
    fields = {k: v for k, v in policy.config.to_dict().items() if k not in ("id2label", "label2id")}
    return LlamaForSequenceClassification(policy.config.__class__(**fields, num_labels=1))


def _run_legacy(name: str, workdir: str) -> Run:
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import RLOOConfig, RLOOTrainer, create_reference_model

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    policy = make_model(tok, os.path.join(workdir, "policy"), seed=0)
    reward_model = _reward_model(policy, seed=2)
    prompts = PROMPTS + EXTRA_PROMPTS
    dataset = Dataset.from_dict({"input_ids": [tok(p)["input_ids"] for p in prompts]})
    config = RLOOConfig(output_dir=os.path.join(workdir, "out"), **{**LEGACY_BASE, **LEGACY_CONFIGS[name]})
    trainer = RLOOTrainer(
        config=config,
        tokenizer=tok,
        policy=policy,
        ref_policy=create_reference_model(policy),
        reward_model=reward_model,
        train_dataset=dataset,
        eval_dataset=dataset,
    )
    args = trainer.args
    out = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        facts={"num_prompts": len(dataset)},
    )
    uninstall = install_legacy_probes(trainer, out)
    try:
        trainer.train()
    finally:
        uninstall()
    out.log_history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    out.facts.update(
        local_batch_size=int(args.local_batch_size),
        local_mini_batch_size=int(args.local_mini_batch_size),
        batch_size=int(args.batch_size),
        num_total_batches=int(args.num_total_batches),
        world_size=int(args.world_size),
    )
    out.seconds = time.perf_counter() - start
    return out
