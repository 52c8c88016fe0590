"""KTO's recorded runs: tiny, fully local KTOTrainer runs on CPU (``tiny.py``) on an unpaired preference dataset
built here, each configured to exercise the code paths behind the keys the pages document. ``record.py`` calls
``run`` with the interpreter of the TRL release under test; the probes (``probes.py``) record every input of the
logged metrics.

trl 0.11.4 predates transformers 4.46, which its lock file pins (shared with the legacy PPO runs): its KTOTrainer
defines a ``get_batch_samples`` (a sampling helper for ``generate_during_eval``) that shadows the Trainer method of
that name the 4.46 training loop calls, and its ``compute_loss`` does not take the ``num_items_in_batch`` argument
4.46 passes. The run restores the Trainer's method and drops the argument; neither touches how a metric is computed.
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

# Completions start with a space: TRL tokenizes `prompt + completion` as one string, and a completion glued to the
# prompt's last word would merge into one unknown token.
COMPLETIONS = [" a b", " c", " d e f", " g h a b", " h", " b c d", " e e", " f a"]
# Labels per micro-batch of 4 rows (sequential sampling): 3 desirable / 1, 1 / 3, 4 / 0 (a micro-batch without any
# undesirable example), 1 / 3. Windows therefore mix micro-batches with different counts, where a mean of
# per-micro-batch means and a pooled mean differ.
LABELS = [True, True, True, False, True, False, False, False, True, True, True, True, False, False, True, False]

# Settings shared by every run. They make every key non-trivial:
# * a high learning rate and beta -> the policy leaves the reference at once: rewards, margins and kl move;
# * per_device_train_batch_size=4 (> 1, which KTO requires for its KL term) with gradient_accumulation_steps=2 ->
#   each optimizer step holds two micro-batches with different label counts;
# * large max_grad_norm -> HF's gradient clipping never changes the gradients, the logged grad_norm is their norm.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    max_steps=4,
    learning_rate=0.2,
    lr_scheduler_type="linear",
    beta=0.5,
    max_grad_norm=1e9,
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
    # the default loss ("kto") with default weights, one optimizer step per log entry
    "main": ("0.11.0", {}),
    # logging windows of two optimizer steps (four micro-batches), a warm-up step at learning rate 0
    "window": ("0.11.0", dict(logging_steps=2, max_steps=6, warmup_steps=1, learning_rate=0.1)),
    # APO-zero (unpaired): no KL term (kl is logged as 0), another loss; unequal class weights
    "apo": ("0.11.0", dict(loss_type="apo_zero_unpaired", desirable_weight=1.5, undesirable_weight=0.5)),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, _) in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def dataset_rows() -> dict[str, list]:
    """16 unpaired examples: each prompt twice, a completion of another length each time, LABELS as labels."""
    prompts = PROMPTS + PROMPTS
    return {
        "prompt": prompts,
        "completion": [COMPLETIONS[(3 * i) % len(COMPLETIONS)] for i in range(len(prompts))],
        "label": list(LABELS),
    }


def _undo_init_shuffle(rows: dict[str, list], seed: int) -> dict[str, list]:
    """TRL up to 0.11 shuffles the training set in ``__init__`` (``Dataset.shuffle(seed=args.data_seed)``); store
    the rows in the inverse order so that the shuffled set is read in the order of LABELS, which the checks of
    single-class micro-batches rely on. The order decides nothing else a page describes."""
    from datasets import Dataset

    perm = Dataset.from_dict({"i": list(range(len(rows["label"])))}).shuffle(seed=seed)["i"]
    out = {key: [None] * len(values) for key, values in rows.items()}
    for position, source in enumerate(perm):
        for key, values in rows.items():
            out[key][source] = values[position]
    return out


def _trainer_class(release: str):
    if Version(release) >= Version("1.8.0") or Version(release) < Version("0.26.0"):
        from trl import KTOTrainer
    else:
        from trl.experimental.kto import KTOTrainer
    if Version(release) >= Version("0.12.0"):
        return KTOTrainer
    import transformers

    class Compatible(KTOTrainer):  # trl 0.11 under transformers 4.46, see the module docstring
        get_batch_samples = transformers.Trainer.get_batch_samples

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            return super().compute_loss(model, inputs, return_outputs)

    return Compatible


def run(name: str, workdir: str) -> Run:
    """Train KTOTrainer with the named configuration in ``workdir`` and return everything it recorded."""
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
    tok.padding_side = "right"
    model = make_model(tok, os.path.join(workdir, "policy"), seed=0)
    rows = dataset_rows()
    config = {"output_dir": os.path.join(workdir, "out"), **BASE_CONFIG, **RUN_CONFIGS[name][1]}
    if Version(release) < Version("0.12.0"):
        rows = _undo_init_shuffle(rows, config["data_seed"])
    if Version(release) >= Version("0.26.0") and Version(release) < Version("1.8.0"):
        from trl.experimental.kto import KTOConfig
    else:
        from trl import KTOConfig
    args = KTOConfig(**config)
    tokenizer_arg = {"processing_class": tok} if Version(release) >= Version("0.12.0") else {"tokenizer": tok}
    trainer = _trainer_class(release)(model=model, args=args, train_dataset=Dataset.from_dict(rows), **tokenizer_arg)
    out = Run(
        name=name,
        trl_version=release,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in trainer.args.to_dict().items()},
        log_history=[],
        facts={"num_rows": len(rows["label"]), "labels": list(LABELS)},
    )
    uninstall = install_probes(trainer, out)
    try:
        trainer.train()
    finally:
        uninstall()
    out.log_history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    out.seconds = time.perf_counter() - start
    return out
