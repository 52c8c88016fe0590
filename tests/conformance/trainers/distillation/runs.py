"""The distillation runs: tiny, fully local DistillationTrainer runs on CPU (``tiny.py``), a random student and a
sharper random teacher sharing its vocabulary, each configured to exercise the code paths behind the logged keys.
``record.py`` calls ``run`` with the interpreter of the TRL release under test; the probes (``probes.py``) record
every input of the logged metrics.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import PROMPTS, make_model, make_tokenizer, plain

# Settings shared by every run:
# * a large learning rate, so that the student moves and the loss and entropy change from step to step;
# * a huge max_grad_norm: HF's clipping never rescales, so the probe reads the gradients whose norm HF logs;
# * max_completion_length=6 with a 12-token vocabulary: some completions end with EOS, many are cut.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    max_completion_length=6,
    max_steps=4,
    learning_rate=0.05,
    lr_scheduler_type="linear",
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
    # the default divergence (reverse KL) at temperature 1, one log per optimizer step
    "reverse": ("1.10.0", {}),
    # forward KL at a temperature below 1, windows of two optimizer steps (window means of loss, entropy and the
    # completion keys; num_tokens, grad_norm and learning_rate taken at the window's last step); warmup
    "forward": ("1.10.0", dict(beta=0.0, temperature=0.7, logging_steps=2, warmup_steps=1)),
    # the generalized JSD at a temperature above 1, one micro-batch per optimizer step, 4 prompts per step
    "jsd": ("1.10.0", dict(beta=0.5, temperature=1.3, per_device_train_batch_size=4, gradient_accumulation_steps=1)),
    # a second EOS id in the student's generation config (an end-of-turn token): TRL >= 1.14.2 stops at it and
    # counts it as a finished completion; older releases treat it as an ordinary token
    "two_eos": ("1.10.0", dict(beta=0.9)),
}

TEACHER_SHARPNESS = 4.0  # the teacher's lm_head is scaled up, so its distributions are peaked and the divergence large
SECOND_EOS = "h"  # the word the "two_eos" run declares as an extra EOS id


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, _) in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def run(name: str, workdir: str) -> Run:
    """Run DistillationTrainer with the named configuration in ``workdir`` and return everything it recorded."""
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import DistillationConfig, DistillationTrainer

    from .probes import install_probes

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    student = make_model(tok, os.path.join(workdir, "student"), seed=0)
    teacher = make_model(tok, os.path.join(workdir, "teacher"), seed=1)
    with torch.no_grad():
        teacher.lm_head.weight.mul_(TEACHER_SHARPNESS)
    if name == "two_eos":
        student.generation_config.eos_token_id = [tok.eos_token_id, tok.convert_tokens_to_ids(SECOND_EOS)]
    args = DistillationConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **RUN_CONFIGS[name][1]})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    trainer = DistillationTrainer(
        model=student, teacher_model=teacher, args=args, train_dataset=dataset, processing_class=tok
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
    out.seconds = time.perf_counter() - start
    return out
