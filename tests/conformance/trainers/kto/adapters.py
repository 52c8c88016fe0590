"""Adapters: how each KTO page's snippet is fed from a recorded run, per TRL release; and the keys whose snippets must
tell an older release from the latest one.

Every entry is fed from one dictionary of inputs (``window_inputs``), one item per training micro-batch of the log
entry's window, in the order TRL ran them; each snippet takes the inputs its signature names, so a 0.26 snippet that
wants every logit of the padded sequence (``full_logits``) and a 1.16 snippet that wants the logits of the positions
that predict a token (``logits``) are fed by the same adapter. The tensors are rebuilt from a plain forward of the
policy and the reference model on the batch TRL used (``records.py``), so they agree with TRL to float rounding: TRL
1.15+ computes log-probabilities with a fused, chunked LM head, and TRL < 1.6 sums the logits of every position and
vocabulary entry (large sums, a looser tolerance). transformers 4.x rounds the logged `loss` to 4 decimals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import MicroBatch, OptStep

LOGPS_ATOL = 2e-6  # sums over a completion of per-token log-probabilities that agree to ~1e-7 each
FULL_LOGITS_ATOL = 5e-5  # TRL < 1.6: float32 sums of every logit of the padded sequences, values of order 10-100
ROUNDED_LOSS_ATOL = 6e-5  # transformers 4.x: round(loss, 4)


def window(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = [m for m in run.within(MicroBatch, entry["step"]) if m.training]
    assert mbs, f"{run.name}: no training micro-batch recorded for step {entry['step']}"
    return mbs


def window_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """Every input any KTO snippet names, one item per micro-batch of the window (rows of the one process)."""
    a = run.args
    mbs = window(run, entry)
    kto = a.loss_type == "kto"

    def kl_rows(m: MicroBatch, ref: bool) -> torch.Tensor:
        if not kto:  # apo_zero_unpaired builds no mismatched sequences; the snippets ignore these
            return torch.zeros(1, m.label.shape[0])
        return (m.kl_ref_logps if ref else m.kl_logps).unsqueeze(0)  # [P=1, b]

    return dict(
        policy_logps=[m.logps for m in mbs],
        ref_logps=[m.ref_logps for m in mbs],
        labels=[m.label for m in mbs],
        token_logps=[m.token_logps for m in mbs],
        mask=[m.mask for m in mbs],
        logits=[m.shifted_logits for m in mbs],
        full_logits=[m.logits for m in mbs],
        policy_kl_logps=[kl_rows(m, ref=False) for m in mbs],
        ref_kl_logps=[kl_rows(m, ref=True) for m in mbs],
        beta=float(a.beta),
        desirable_weight=float(a.desirable_weight),
        undesirable_weight=float(a.undesirable_weight),
        loss_type=str(a.loss_type),
    )


def _key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(window_inputs(run, entry), key)]

    return cases


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    seen = [m for m in run.of(MicroBatch) if m.training and m.log_step <= entry["step"]]
    return [(dict(attention_masks=[m.attention_mask for m in seen], tp_size=1), "num_tokens")]


def _grad_norm(run: Run, entry: dict[str, Any]) -> list[Case]:
    last = run.within(OptStep, entry["step"])[-1]  # HF logs the norm of the window's last optimizer step
    return [(dict(grads=last.grads, max_grad_norm=float(run.args.max_grad_norm)), "grad_norm")]


def _learning_rate(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        max_steps=int(a.max_steps),
        learning_rate=float(a.learning_rate),
        warmup_steps=a.warmup_steps,
        warmup_ratio=float(getattr(a, "warmup_ratio", 0.0) or 0.0),
    )
    return [(kwargs, ["learning_rate"])]


def _epoch(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        num_rows=int(run.facts["num_rows"]),
        per_device_train_batch_size=int(a.per_device_train_batch_size),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=1,
    )
    return [(kwargs, ["epoch"])]


ALL_RUNS = ("main", "window", "apo")  # apo logs kl as 0 and another loss; its per-class keys are computed as usual

PER_CLASS = ("rewards/chosen", "rewards/rejected", "logps/chosen", "logps/rejected", "rewards/margins")


def _common(logits_atol: float, loss_atol: float) -> dict[str, Adapter]:
    table = {f"kto/{k}": Adapter(ALL_RUNS, _key(k), atol=LOGPS_ATOL) for k in PER_CLASS}
    table.update(
        {
            "kto/kl": Adapter(ALL_RUNS, _key("kl")),
            "kto/loss": Adapter(ALL_RUNS, _key("loss"), atol=loss_atol),
            "kto/logits/chosen": Adapter(ALL_RUNS, _key("logits/chosen"), atol=logits_atol),
            "kto/logits/rejected": Adapter(ALL_RUNS, _key("logits/rejected"), atol=logits_atol),
            "kto/grad_norm": Adapter(ALL_RUNS, _grad_norm, atol=1e-9),
            "kto/learning_rate": Adapter(ALL_RUNS, _learning_rate, atol=1e-12),
            "kto/epoch": Adapter(ALL_RUNS, _epoch, atol=0.0),
        }
    )
    return table


V1 = {
    **_common(logits_atol=1e-6, loss_atol=1e-6),
    "kto/entropy": Adapter(ALL_RUNS, _key("entropy")),
    "kto/num_tokens": Adapter(ALL_RUNS, _num_tokens, atol=0.0),
}

ADAPTERS: dict[str, dict[str, Adapter]] = {
    "1.16.0": V1,
    "1.12.0": V1,
    "0.26.2": _common(logits_atol=FULL_LOGITS_ATOL, loss_atol=ROUNDED_LOSS_ATOL),
    "0.11.4": _common(logits_atol=FULL_LOGITS_ATOL, loss_atol=ROUNDED_LOSS_ATOL),
}

_POOLED = "the window pools the class's rows (sum over count) instead of averaging per-micro-batch means (1.6.0)"
_LOGITS_SUM = ("every logit of every position and vocabulary entry summed per completion, instead of the vocabulary "
               "mean over the completion tokens (1.9.0)")
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "kto/rewards/chosen": _POOLED,
        "kto/rewards/rejected": _POOLED,
        "kto/logps/chosen": _POOLED,
        "kto/logps/rejected": _POOLED,
        "kto/rewards/margins": "pooled chosen minus pooled rejected, instead of the mean of per-micro-batch margins "
                               "over micro-batches that hold both classes (1.6.0, 1.7.0)",
        "kto/logits/chosen": _LOGITS_SUM,
        "kto/logits/rejected": _LOGITS_SUM,
    },
    "0.11.4": {
        "kto/rewards/chosen": _POOLED,
        "kto/rewards/rejected": _POOLED,
        "kto/logps/chosen": _POOLED,
        "kto/logps/rejected": _POOLED,
        "kto/rewards/margins": "pooled chosen minus pooled rejected, instead of the mean of per-micro-batch margins "
                               "over micro-batches that hold both classes (1.6.0, 1.7.0)",
        "kto/logits/chosen": _LOGITS_SUM,
        "kto/logits/rejected": _LOGITS_SUM,
        "kto/learning_rate": "transformers < 4.51 (all that trl 0.11's KTOTrainer runs on) logs the rate after "
                             "lr_scheduler.step(), the rate of the next step",
    },
}
