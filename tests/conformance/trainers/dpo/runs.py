"""DPO's recorded runs: tiny, fully local DPOTrainer runs on CPU (``tiny.py``), each configured to exercise the code
paths behind the keys the pages document. ``record.py`` calls ``run`` with the interpreter of the TRL release under
test; the probes (``probes.py``) record every input of the logged metrics.
"""

from __future__ import annotations

import os
import random
import time
import types
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import PROMPTS, make_model, make_tokenizer, plain
from .probes import install_probes
from .records import MicroBatch

# One preference pair per prompt of tiny.PROMPTS. The completions differ in length, and for some pairs the chosen
# completion is the longer one, for others the shorter one, so that sums over tokens and per-token means disagree.
# Each completion ends with a space: TRL >= 0.29 appends the EOS token to the text, and the word-level tokenizer
# splits only on whitespace.
CHOSEN = [" a b ", " c ", " d e f ", " g ", " h a b c ", " e ", " f g ", " b "]
REJECTED = [" h ", " d e f g ", " a ", " b c d ", " e ", " f g h a ", " c ", " d e "]

# The settings shared by every run. They make every key non-trivial:
# * a large beta and learning rate: the implicit rewards leave 0 after the first update and their means move;
# * per_device_train_batch_size=2, gradient_accumulation_steps=2, logging_steps=2: each log entry averages four
#   micro-batches of two pairs (the first micro-batch of the first entry is before any update: its rewards are 0);
# * a large max_grad_norm: HF's clipping never rescales, so grad_norm is the norm of the gradient;
# * no dropout, no gradient checkpointing, fp32 on CPU: the probes' plain forwards see what the loss saw.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    max_steps=6,
    learning_rate=0.05,
    lr_scheduler_type="linear",
    warmup_steps=0,
    beta=0.5,
    max_grad_norm=1e9,
    logging_steps=2,
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

# name -> (first TRL release the run is recorded for, last release + 1 or None, overrides of BASE_CONFIG)
RUN_CONFIGS: dict[str, tuple[str, str | None, dict[str, Any]]] = {
    # the default loss, sigmoid
    "main": ("0.7.10", None, {}),
    # IPO: up to 0.28 it divides the sequence log-probs by the completion length, and logps/* and rewards/* with it
    "ipo": ("0.7.10", None, dict(loss_type="ipo", max_steps=4, beta=0.2)),
    # RPO: an NLL term on the chosen completions, logged as `nll_loss` (0.9.6 - 0.28)
    "rpo": ("0.9.6", "0.29.0", dict(rpo_alpha=0.5, max_steps=4)),
    # two loss types (MPO-style): up to 0.28 the rewards are summed once per loss type, from 0.29 they are not
    "multi": ("0.20.0", None, dict(loss_type=["sigmoid", "sft"], max_steps=4)),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    v = Version(trl_version)
    return [name for name, (since, until, _) in RUN_CONFIGS.items()
            if Version(since) <= v and (until is None or v < Version(until))]


def dataset_rows() -> dict[str, list[str]]:
    return {"prompt": list(PROMPTS), "chosen": list(CHOSEN), "rejected": list(REJECTED)}


def run(name: str, workdir: str) -> Run:
    """Run DPOTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import DPOConfig, DPOTrainer

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    tok.padding_side = "right"
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    overrides = RUN_CONFIGS[name][2]
    old = Version(trl.__version__) < Version("0.26.0")
    if old and isinstance(overrides.get("loss_type"), list):
        raise ValueError(f"run {name}: several loss types need TRL >= 0.20")
    config = {**BASE_CONFIG, **overrides}
    args = DPOConfig(output_dir=os.path.join(workdir, "out"), **config)
    dataset = Dataset.from_dict(dataset_rows())
    kwargs = {"tokenizer" if Version(trl.__version__) < Version("0.12.0") else "processing_class": tok}
    trainer = DPOTrainer(model=model, args=args, train_dataset=dataset, **kwargs)
    if Version(trl.__version__) < Version("0.12.0"):
        # TRL <= 0.11 defines its own `get_batch_samples(model, batch)` (samples for `generate_during_eval`), which
        # transformers >= 4.46 calls as its loop helper `get_batch_samples(epoch_iterator, num_batches)`: training
        # fails at the first step. Give the instance the Trainer's helper back (generation during eval stays off).
        trainer.get_batch_samples = types.MethodType(transformers.Trainer.get_batch_samples, trainer)
    out = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        facts={"num_pairs": len(dataset)},
    )
    install_probes(trainer, out)
    trainer.train()
    out.log_history = [{k: plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    out.facts["micro_batches"] = len(out.of(MicroBatch))
    out.seconds = time.perf_counter() - start
    return out
