"""SFT's recorded runs: tiny, fully local ``SFTTrainer`` runs on CPU (``tiny.py``). ``record.py`` calls ``run`` with
the interpreter of the TRL release under test; the probes (``probes.py``) record every input of the logged keys.

From TRL 0.17 the data is a prompt-completion dataset, so that the default ``completion_only_loss=None`` masks the
prompt out of the labels (the prompt still counts in ``attention_mask``, which tells the 0.26 ``entropy`` apart from
the later one). TRL 0.11.4 has no such option: the same pairs become one ``text`` column and
``DataCollatorForCompletionOnlyLM`` masks everything up to the response template (``<bos>`` here).
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

# Completions of different lengths (a leading space: TRL concatenates prompt and completion as text)
COMPLETIONS = [" b c", " f", " a a b", " c d", " g", " a b", " f g h", " e"]
EVAL_ROWS = 5  # the first rows again, in evaluation batches of 3 and 2 (a batch mean is not a token mean)

# Settings that make every key non-trivial:
# * gradient_accumulation_steps=2 -> `num_items_in_batch` spans two micro-batches of different token counts, and
#   a log entry averages micro-batches that weigh differently;
# * logging_steps=2 -> each entry covers two optimizer steps (window means; grad_norm and learning_rate of the last);
# * a high learning rate and warm-up -> accuracy and entropy move, the first step runs at learning rate 0;
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


def _trainer(tok, model, workdir: str):
    """An SFTTrainer on the prompt-completion pairs, in the form the installed TRL takes them."""
    import trl
    from datasets import Dataset

    if Version(trl.__version__) < Version("0.17.0"):
        from trl import SFTConfig, SFTTrainer
        from trl.trainer.utils import DataCollatorForCompletionOnlyLM

        tok.padding_side = "right"
        texts = [f"{p} <bos>{c} <eos>" for p, c in zip(PROMPTS, COMPLETIONS, strict=True)]
        data = Dataset.from_dict({"text": texts})
        args = SFTConfig(
            output_dir=os.path.join(workdir, "out"), dataset_text_field="text", max_seq_length=32, **BASE_CONFIG
        )
        collator = DataCollatorForCompletionOnlyLM("<bos>", tokenizer=tok)
        trainer = SFTTrainer(
            model=model,
            args=args,
            train_dataset=data,
            eval_dataset=data.select(range(EVAL_ROWS)),
            tokenizer=tok,
            data_collator=collator,
        )
        return trainer, args, len(data)

    from trl import SFTConfig, SFTTrainer

    data = Dataset.from_dict({"prompt": PROMPTS, "completion": COMPLETIONS})
    args = SFTConfig(output_dir=os.path.join(workdir, "out"), **BASE_CONFIG)
    trainer = SFTTrainer(
        model=model,
        args=args,
        train_dataset=data,
        eval_dataset=data.select(range(EVAL_ROWS)),
        processing_class=tok,
    )
    return trainer, args, len(data)


def run(name: str, workdir: str) -> Run:
    """Run SFTTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    import transformers
    import trl
    from transformers import set_seed

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
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
