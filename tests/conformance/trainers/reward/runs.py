"""The Reward trainer's recorded runs: tiny, fully local ``RewardTrainer`` runs on CPU (``tiny.py``'s tokenizer, a
two-layer ``LlamaForSequenceClassification`` with one label as the reward model). ``record.py`` calls ``run`` with the
interpreter of the TRL release under test; the probes (``probes.py``) record every input of the logged keys.

The pairs carry a ``margin`` column and one pair whose chosen and rejected texts are the same (a tie: equal scores),
in training and in evaluation. TRL >= 0.24 takes the texts (``chosen``/``rejected``); TRL 0.11.4 takes them
tokenized (``input_ids_chosen``, ...), and its ``RewardTrainer.compute_loss`` predates the ``num_items_in_batch``
argument that the pinned transformers 4.46.3 passes, which the probe absorbs.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import make_tokenizer, plain
from .probes import install_probes

CHOSEN = ["a b c", "d e f", "a a", "b c d e", "f g", "a", "c c c", "h a b"]
REJECTED = ["h h", "g", "h g f e", "h", "g g g", "h h h h", "g h", "h a b"]  # the last pair is a tie
MARGIN = [0.5, 0.0, 1.0, 0.25, 0.0, 2.0, 0.5, 0.0]
EVAL_ROWS = [0, 1, 2, 3, 7]  # batches of 3 and 2, the tie in the second one

# Settings that make every key non-trivial:
# * gradient_accumulation_steps=2 and logging_steps=2 -> a log entry averages four micro-batches of two pairs;
# * a margin column and center_rewards_coefficient -> both extra terms of the loss are on;
# * a high learning rate with warm-up -> the scores move apart, accuracy and margin change sign;
# * eval every 3 steps with batches of 3 -> eval_* entries in the middle of a logging window;
# * large max_grad_norm -> HF's clipping never changes the gradients.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    per_device_eval_batch_size=3,
    max_steps=6,
    learning_rate=0.05,
    lr_scheduler_type="linear",
    warmup_steps=1,
    logging_steps=2,
    eval_strategy="steps",
    eval_steps=3,
    max_grad_norm=1e9,
    center_rewards_coefficient=0.01,
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

RUN_CONFIGS: dict[str, str] = {"main": "0.11.0"}  # name -> first TRL release it is recorded for


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, since in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def make_reward_model(tok, seed: int):
    """A randomly initialised two-layer Llama with a one-label score head for ``tok``."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
        num_labels=1,
    )
    return LlamaForSequenceClassification(config)


def _trainer(tok, model, workdir: str):
    """A RewardTrainer on the pairs, in the form the installed TRL takes them."""
    import trl
    from datasets import Dataset
    from trl import RewardConfig, RewardTrainer

    pairs = {"chosen": CHOSEN, "rejected": REJECTED, "margin": MARGIN}
    if Version(trl.__version__) < Version("0.24.0"):
        tok.padding_side = "right"

        def tokenize(example):
            c, r = tok(example["chosen"]), tok(example["rejected"])
            return {
                "input_ids_chosen": c["input_ids"],
                "attention_mask_chosen": c["attention_mask"],
                "input_ids_rejected": r["input_ids"],
                "attention_mask_rejected": r["attention_mask"],
            }

        data = Dataset.from_dict(pairs).map(tokenize, remove_columns=["chosen", "rejected"])
        args = RewardConfig(output_dir=os.path.join(workdir, "out"), max_length=32, **BASE_CONFIG)
        trainer = RewardTrainer(
            model=model, args=args, train_dataset=data, eval_dataset=data.select(EVAL_ROWS), tokenizer=tok
        )
        return trainer, args, len(data)

    data = Dataset.from_dict(pairs)
    args = RewardConfig(output_dir=os.path.join(workdir, "out"), **BASE_CONFIG)
    trainer = RewardTrainer(
        model=model, args=args, train_dataset=data, eval_dataset=data.select(EVAL_ROWS), processing_class=tok
    )
    return trainer, args, len(trainer.train_dataset)


def run(name: str, workdir: str) -> Run:
    """Run RewardTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    import transformers
    import trl
    from transformers import set_seed

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_reward_model(tok, seed=0)
    trainer, args, num_rows = _trainer(tok, model, workdir)
    out = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        facts={"num_rows": num_rows},
    )
    install_probes(trainer, out)
    trainer.train()
    history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    out.log_history = [e for e in history if not any(k.startswith("eval_") for k in e)]
    out.facts["eval_log"] = [e for e in history if any(k.startswith("eval_") for k in e)]
    out.seconds = time.perf_counter() - start
    return out
