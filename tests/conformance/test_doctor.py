"""atlas doctor on the logs of the real trainer runs this folder records: the same history as trainer_state.json,
TensorBoard events written by transformers' own TensorBoardCallback, W&B-style JSON lines and a CSV gives the same
findings, with the trainer found from the keys; and AtlasDoctorCallback in a real GRPOTrainer run on the tiny local
model warns on a planted problem while training finishes."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.doctor.evaluate import diagnose
from generator.doctor.readers import read_history
from generator.doctor.rulebook import load_book

from ..conftest import ROOT
from .cases import trainer_lines, uses
from .driver import Run


def _lines() -> list:
    return [pytest.param(tl, marks=uses(tl.trainer, tl.release), id=tl.id) for tl in trainer_lines()]


def _scalar(v) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool))


def write_formats(folder: Path, run: Run) -> dict[str, Path]:
    """The run's history in every format the doctor reads, each written the way its tool writes it."""
    folder.mkdir(parents=True)
    out = {"trainer_state": folder / "trainer_state.json", "wandb_jsonl": folder / "wandb-history.jsonl",
           "csv": folder / "export.csv", "tensorboard": folder / "runs"}
    out["trainer_state"].write_text(json.dumps({"global_step": run.entries()[-1]["step"],
                                                "log_history": run.log_history}))
    from transformers.integrations import TensorBoardCallback

    tb = TensorBoardCallback()
    tb.logging_dir = str(out["tensorboard"])
    for entry in run.log_history:
        state = SimpleNamespace(is_world_process_zero=True, global_step=entry["step"])
        tb.on_log(SimpleNamespace(), state, None, logs={k: v for k, v in entry.items() if k != "step"})
    tb.on_train_end(SimpleNamespace(), None, None)
    keys = sorted({k for e in run.log_history for k, v in e.items() if k != "step" and _scalar(v)})
    with out["wandb_jsonl"].open("w") as f, out["csv"].open("w", newline="") as g:
        table = csv.writer(g)
        table.writerow(["train/global_step"] + [f"train/{k}" for k in keys])
        for n, e in enumerate(run.log_history):
            f.write(json.dumps({**{f"train/{k}": e[k] for k in keys if k in e}, "train/global_step": e["step"],
                                "_step": n}) + "\n")
            table.writerow([e["step"]] + [("NaN" if e[k] is None else repr(e[k])) if k in e else "" for k in keys])
    return out


def signature(d) -> set[tuple]:
    return {(f.rule["id"], f.key, tuple(f.spans)) for f in d.findings}


@pytest.mark.parametrize("line", _lines())
def test_doctor_reads_every_format_of_a_real_run_alike(line, recorded, tmp_path):
    book = load_book(ROOT)
    runs = recorded(line.trainer, line.release)
    assert runs
    for name, run in runs.items():
        if not run.entries():
            pytest.fail(f"{line.id}, run {name}: no log entry with a step")
        files = write_formats(tmp_path / name, run)
        got = {fmt: diagnose(book, read_history(path), trl=line.release) for fmt, path in files.items()}
        reference = got["trainer_state"]
        # a training log made only of HF Trainer's own keys (SFT and Reward before TRL 0.24 both log just loss,
        # grad_norm, learning_rate and epoch) cannot name its trainer: a trainer the doctor picks instead must explain
        # exactly the same keys, and the doctor is then told which trainer it is
        for d in (reference, diagnose(book, read_history(files["trainer_state"]))):
            if d.trainer["id"] != line.trainer:
                told = diagnose(book, read_history(files["trainer_state"]), trainer=line.trainer, trl=line.release)
                assert sorted(told.known) == sorted(d.known), f"{line.id}, run {name}: detected {d.trainer['id']}"
        if reference.trainer["id"] != line.trainer:
            got = {fmt: diagnose(book, read_history(path), trainer=line.trainer, trl=line.release)
                   for fmt, path in files.items()}
            reference = got["trainer_state"]
        # TensorBoardCallback drops None values (it writes only ints, floats and text): what TRL wrote as None is
        # not in the events, so only the findings of `nan` rules on those keys may be missing there
        nones = {k for e in run.entries() for k, v in e.items() if v is None}
        for fmt, d in got.items():
            assert d.unknown == reference.unknown, (line.id, name, fmt)
            want = signature(reference)
            if fmt == "tensorboard":
                want = {s for s in want if not (s[1] in nones and "nan" in _op(reference, s))}
            assert signature(d) == want, (line.id, name, fmt, signature(d) ^ want)


def _op(d, sig: tuple) -> str:
    return next(f.rule.get("op") or "" for f in d.findings if (f.rule["id"], f.key, tuple(f.spans)) == sig)


def test_doctor_callback_warns_in_a_real_grpo_run(tmp_path):
    """A GRPOTrainer run on the tiny local model whose only reward function gives every completion the same score:
    every group is constant, `frac_reward_zero_std` is 1 on every log, and the callback says so once, with the
    page, while training runs to its last step."""
    from .tiny import PROMPTS, make_model, make_tokenizer, offline, one_thread, quiet

    offline()
    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    from rl_metrics_atlas import AtlasDoctorCallback, RunHealthWarning

    def constant(completions, **kwargs):
        return [1.0] * len(completions)

    set_seed(0)
    tok = make_tokenizer()
    model = make_model(tok, str(tmp_path / "model"), seed=0)
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=6, max_steps=6, logging_steps=1, learning_rate=1e-3, use_cpu=True,
                      report_to="none", save_strategy="no", disable_tqdm=True, seed=0, bf16=False, fp16=False)
    doctor = AtlasDoctorCallback(lang="en")
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[constant], args=args,
                          train_dataset=Dataset.from_dict({"prompt": PROMPTS}), callbacks=[doctor])
    with warnings.catch_warnings(record=True) as caught, quiet(), one_thread():
        warnings.simplefilter("always")
        trainer.train()
    assert trainer.state.global_step == 6
    assert doctor.off is None
    found = {(f.key, f.rule.get("op")) for f in doctor.findings}
    assert ("frac_reward_zero_std", "==") in found, found
    said = [str(w.message) for w in caught if issubclass(w.category, RunHealthWarning)]
    assert len(said) == len(doctor.findings)
    assert any("frac_reward_zero_std" in s and "/grpo/frac_reward_zero_std/" in s for s in said), said
