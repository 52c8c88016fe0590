"""PPO's recorded runs: tiny, fully local runs of TRL's PPO trainer on CPU (``tiny.py``): a two-layer Llama policy, a
value model and a reward model of the same shape (``LlamaForSequenceClassification`` with one label, so that TRL's
``get_reward`` finds the ``score`` head), the reference model made by TRL itself (``ref_model=None``), prompts
tokenized in advance (PPO takes ``input_ids``). ``record.py`` calls ``run`` with the interpreter of the TRL release
under test; the probes (``probes.py``) record every input of the logged keys.
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

# Twelve prompts: with 8 rows per update and drop_last, every pass over the data drops 4 of them, so `epoch`
# (episodes / dataset rows) runs ahead of the prompts actually seen.
EXTRA_PROMPTS = ["a a b", "c", "d f h", "e g b c"]

# Settings shared by every run. They make every key non-trivial:
# * stop_token="eos" -> responses stop at EOS and are padded, so the unmasked means (approxkl, entropy_avg, ratio)
#   and the masked ones differ, and objective/entropy shows the padding bias before 1.10;
# * missing_eos_penalty -> objective/scores is lowered for responses without EOS;
# * a high learning rate -> the policy moves within an update: ratio != 1, clipping and value clipping happen;
# * num_sample_generations=0 -> no completions table (it needs an eval set).
BASE_CONFIG: dict[str, Any] = dict(
    response_length=6,
    stop_token="eos",
    missing_eos_penalty=1.0,
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

# name -> (first TRL release it is recorded for, overrides of BASE_CONFIG for TRL >= 0.17, for TRL < 0.17)
# Before 0.17 a rollout batch is per_device_train_batch_size x gradient_accumulation_steps x num_mini_batches rows;
# from 0.17 it is per_device_train_batch_size x gradient_accumulation_steps, split into num_mini_batches. The
# overrides keep 8 rows per update in both.
RUN_CONFIGS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # 2 PPO epochs x 2 mini-batches x gradient accumulation: from 0.17 each mini-batch runs 2 of the 4 accumulation
    # cells, the other 2 stay 0 in TRL's stats tensors; before 0.17 every cell is filled. 3 updates, linear decay.
    "main": (
        "0.11.0",
        dict(
            per_device_train_batch_size=2,
            gradient_accumulation_steps=4,
            num_mini_batches=2,
            num_ppo_epochs=2,
            total_episodes=24,
        ),
        dict(
            per_device_train_batch_size=2,
            gradient_accumulation_steps=2,
            num_mini_batches=2,
            num_ppo_epochs=2,
            total_episodes=24,
        ),
    ),
    # one stats cell (1 epoch, 1 mini-batch, 1 micro-batch): val/ratio_var is NaN. No stop token and longer responses
    # (they run to response_length and some hold several EOS), whitened rewards (needs 8 rows per mini-batch), the
    # k3 estimator (0.17+), a warm-up update at learning rate 0.
    "one_cell": (
        "0.11.0",
        dict(
            per_device_train_batch_size=8,
            gradient_accumulation_steps=1,
            num_mini_batches=1,
            num_ppo_epochs=1,
            total_episodes=24,
            stop_token=None,
            response_length=10,
            whiten_rewards=True,
            kl_estimator="k3",
            warmup_steps=1,
            kl_coef=0.2,
        ),
        dict(
            per_device_train_batch_size=8,
            gradient_accumulation_steps=1,
            num_mini_batches=1,
            num_ppo_epochs=1,
            total_episodes=24,
            stop_token=None,
            response_length=10,
            whiten_rewards=True,
            warmup_steps=1,
            kl_coef=0.2,
        ),
    ),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, *_) in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def config_for(name: str, trl_version: str) -> dict[str, Any]:
    since, new, old = RUN_CONFIGS[name]
    return {**BASE_CONFIG, **(new if Version(trl_version) >= Version("0.17.0") else old)}


def _value_head(policy, seed: int):
    """A LlamaForSequenceClassification with the policy's shape and one label (a value or reward model)."""
    import torch
    from transformers import LlamaForSequenceClassification

    torch.manual_seed(seed)
    fields = {k: v for k, v in policy.config.to_dict().items() if k not in ("id2label", "label2id")}
    config = policy.config.__class__(**fields, num_labels=1)  # id2label would win over num_labels in transformers 4
    return LlamaForSequenceClassification(config)


def run(name: str, workdir: str) -> Run:
    """Run TRL's PPO trainer with the named configuration in ``workdir`` and return everything it recorded."""
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    release = trl.__version__
    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    tok.padding_side = "left"
    policy = make_model(tok, os.path.join(workdir, "policy"), seed=0)
    value_model, reward_model = _value_head(policy, seed=1), _value_head(policy, seed=2)
    prompts = PROMPTS + EXTRA_PROMPTS
    dataset = Dataset.from_dict({"input_ids": [tok(p)["input_ids"] for p in prompts]})
    config = {"output_dir": os.path.join(workdir, "out"), **config_for(name, release)}
    if Version(release) >= Version("0.26.0"):
        from trl.experimental.ppo import PPOConfig, PPOTrainer

        trainer = PPOTrainer(
            args=PPOConfig(**config),
            processing_class=tok,
            model=policy,
            ref_model=None,
            reward_model=reward_model,
            train_dataset=dataset,
            value_model=value_model,
        )
    elif Version(release) >= Version("0.12.0"):
        from trl import PPOConfig, PPOTrainer

        trainer = PPOTrainer(PPOConfig(**config), tok, policy, None, reward_model, dataset, value_model)
    else:
        from trl import PPOv2Config, PPOv2Trainer, create_reference_model

        config.pop("kl_estimator", None)
        trainer = PPOv2Trainer(
            config=PPOv2Config(**config),
            tokenizer=tok,
            policy=policy,
            ref_policy=create_reference_model(policy),
            reward_model=reward_model,
            train_dataset=dataset,
            value_model=value_model,
        )
    args = trainer.args
    out = Run(
        name=name,
        trl_version=release,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        facts={"num_prompts": len(dataset)},
    )
    uninstall = install_probes(trainer, out)
    try:
        trainer.train()
    finally:
        uninstall()
    out.log_history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    # what __init__ derived from the settings (to_dict() above was taken after it, but say so explicitly)
    out.facts.update(
        local_batch_size=int(args.local_batch_size),
        local_mini_batch_size=int(args.local_mini_batch_size),
        batch_size=int(args.batch_size),
        num_total_batches=int(args.num_total_batches),
        world_size=int(args.world_size),
    )
    out.seconds = time.perf_counter() - start
    return out
