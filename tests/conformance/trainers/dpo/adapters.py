"""Adapters: how each DPO metric's reference snippet is fed from a recorded DPOTrainer run, per TRL release; and the
keys whose snippets must tell an older release from the latest one.

``ADAPTERS[trl_release]`` maps a metric id (``dpo/<key>``) to a ``driver.Adapter``: the runs it uses
(``runs.RUN_CONFIGS``) and a function ``(run, log_entry) -> [(inputs, logged key), ...]``. The inputs offer
everything the snippets of any release may ask for, by the names they use; each snippet receives the ones its
signature names. Loss-side snippets take one tensor per micro-batch of the entry's window (``Run.within``).

The per-token log-probabilities fed to the snippets are recomputed from the policy's and the reference model's
logits of a plain forward on the rows TRL used (``probes.py``): TRL 1.15+ computes them inside its fused LM head, so
the snippets agree with TRL to float32 rounding (about 1e-6 on these tiny runs), not bit for bit.

A metric a release logs but has no adapter for here must say ``conformance.checked: false`` for that release.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ...driver import Adapter, Case, Run
from .records import MicroBatch, OptStep

# float32 sums of a handful of per-token log-probabilities, recomputed outside TRL's fused kernel
ATOL = 1e-5
# transformers 4.x rounds the logged `loss` to 4 decimals: half a unit of the 4th decimal, plus the float slack
ROUNDED_LOSS_ATOL = 5e-5 + ATOL


def micro(run: Run, entry: dict[str, Any]) -> list[MicroBatch]:
    mbs = run.within(MicroBatch, entry["step"])
    assert mbs, f"{run.name}: no micro-batch recorded for step {entry['step']}"
    return mbs


def loss_type(run: Run) -> Any:
    """The configured loss type(s): a name for a single type (as TRL <= 0.28 stores it), else the list."""
    lt = run.args.loss_type
    return lt[0] if isinstance(lt, list) and len(lt) == 1 else lt


def pair_inputs(run: Run, entry: dict[str, Any]) -> dict[str, Any]:
    """Everything the loss-side snippets read, one tensor per micro-batch of the window, by the snippets' names."""
    w = micro(run, entry)
    out: dict[str, Any] = {}
    for side, pick in (("chosen", 0), ("rejected", 1)):
        out[f"logps_{side}"] = [m.halves(m.token_logps())[pick] for m in w]
        out[f"ref_logps_{side}"] = [m.halves(m.token_logps(ref=True))[pick] for m in w]
        out[f"mask_{side}"] = [m.halves(m.mask)[pick] for m in w]
        out[f"labels_{side}"] = [m.halves(m.labels)[pick] for m in w]
        out[f"logits_{side}"] = [m.halves(m.shifted_logits)[pick] for m in w]
        out[f"all_logits_{side}"] = [m.halves(m.logits)[pick] for m in w]
    out["logits"] = [m.shifted_logits for m in w]
    out["mask"] = [m.mask for m in w]
    a = run.args
    out.update(
        beta=float(a.beta),
        loss_type=loss_type(run),
        loss_weights=getattr(a, "loss_weights", None),
        label_smoothing=float(getattr(a, "label_smoothing", 0.0) or 0.0),
        rpo_alpha=getattr(a, "rpo_alpha", None),
    )
    return out


def _key(key: str) -> Callable[[Run, dict[str, Any]], list[Case]]:
    def cases(run: Run, entry: dict[str, Any]) -> list[Case]:
        return [(pair_inputs(run, entry), key)]

    return cases


def _num_tokens(run: Run, entry: dict[str, Any]) -> list[Case]:
    # every training micro-batch from the start up to the last one of this entry's window
    seen = [m.attention_mask for m in run.of(MicroBatch) if m.log_step <= entry["step"]]
    return [(dict(attention_mask=seen, tp_size=1), "num_tokens")]


def _grad_norm(run: Run, entry: dict[str, Any]) -> list[Case]:
    last = run.within(OptStep, entry["step"])[-1]  # HF logs the norm of the window's last optimizer step
    return [(dict(grads=last.grads, max_grad_norm=float(run.args.max_grad_norm)), "grad_norm")]


def _learning_rate(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        max_steps=int(a.max_steps),
        learning_rate=float(a.learning_rate),
        warmup_steps=int(a.warmup_steps),
    )
    return [(kwargs, ["learning_rate"])]


def _epoch(run: Run, entry: dict[str, Any]) -> list[Case]:
    a = run.args
    kwargs = dict(
        global_steps=torch.tensor([entry["step"]]),
        num_pairs=int(run.facts["num_pairs"]),
        per_device_train_batch_size=int(a.per_device_train_batch_size),
        gradient_accumulation_steps=int(a.gradient_accumulation_steps),
        num_processes=1,
    )
    return [(kwargs, ["epoch"])]


# --------------------------------------------------------------------------------------------------------------------
# Per release
# --------------------------------------------------------------------------------------------------------------------

PAIR_KEYS = ("rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies", "logps/chosen",
             "logps/rejected", "logits/chosen", "logits/rejected")


def _common(runs: tuple[str, ...], loss_atol: float) -> dict[str, Adapter]:
    """The keys every documented release logs and the harness checks, with the runs that log them there."""
    return {
        **{f"dpo/{k}": Adapter(runs, _key(k), atol=ATOL) for k in PAIR_KEYS},
        "dpo/loss": Adapter(runs, _key("loss"), atol=loss_atol),
        "dpo/grad_norm": Adapter(runs, _grad_norm, atol=0.0),  # the same per-parameter norms, then their norm
        "dpo/learning_rate": Adapter(runs, _learning_rate, atol=1e-12),
        "dpo/epoch": Adapter(runs, _epoch, atol=0.0),
    }


# TRL 1.x (1.12.0 and 1.16.0 record the same runs with the same probes)
V1_RUNS = ("main", "ipo", "multi")
V1 = {
    **_common(V1_RUNS, loss_atol=ATOL),
    "dpo/entropy": Adapter(V1_RUNS, _key("entropy"), atol=ATOL),
    "dpo/mean_token_accuracy": Adapter(V1_RUNS, _key("mean_token_accuracy"), atol=1e-7),
    "dpo/num_tokens": Adapter(V1_RUNS, _num_tokens, atol=0.0),
}

# TRL 0.26.2: RPO's nll_loss, several loss types; transformers 4.57 rounds the loss
V026 = {
    **_common(("main", "ipo", "rpo", "multi"), loss_atol=ROUNDED_LOSS_ATOL),
    "dpo/nll_loss": Adapter(("rpo", "multi"), _key("nll_loss"), atol=ATOL),
}

# TRL 0.11.4: one loss type, RPO's nll_loss; transformers 4.46 rounds the loss
V011 = {
    **_common(("main", "ipo", "rpo"), loss_atol=ROUNDED_LOSS_ATOL),
    "dpo/nll_loss": Adapter(("rpo",), _key("nll_loss"), atol=ATOL),
}

ADAPTERS: dict[str, dict[str, Adapter]] = {"1.16.0": V1, "1.12.0": V1, "0.26.2": V026, "0.11.4": V011}

# Keys whose value TRL computes differently in an older site line than in the latest one, in a way these
# single-process runs show (the per-process means of older releases only show with several processes). The older
# release's snippet must reproduce its runs and fail on the latest release's runs, and the other way round.
_IPO = "with IPO the sequence log-probabilities are per-token means (< 0.29) vs. sums (>= 0.29)"
TOLD_APART: dict[str, dict[str, str]] = {
    "0.26.2": {
        "dpo/logps/chosen": _IPO,
        "dpo/logps/rejected": _IPO,
        "dpo/rewards/chosen": _IPO + "; one weighted copy of the reward per loss type (< 0.29)",
        "dpo/rewards/rejected": _IPO + "; one weighted copy of the reward per loss type (< 0.29)",
        "dpo/rewards/margins": _IPO + "; one weighted copy of the rewards per loss type (< 0.29)",
    },
    "0.11.4": {
        "dpo/logits/chosen": "mean over every position of the padded rows (< 0.12) vs. over the completion (>= 0.12)",
        "dpo/logits/rejected": "mean over every position of the padded rows (< 0.12) vs. over the completion "
        "(>= 0.12)",
        "dpo/logps/chosen": _IPO,
        "dpo/logps/rejected": _IPO,
        "dpo/rewards/chosen": _IPO,
        "dpo/rewards/rejected": _IPO,
        "dpo/rewards/margins": _IPO,
    },
}
