"""Invariants of the DPO formulas, checked with hypothesis on the snippets taken from the YAML files: the implicit
rewards are zero while the policy is the reference and scale with beta, margins are chosen minus rejected, padding
changes nothing, log-probabilities are sums over the completion, the sigmoid loss starts at log 2 and matches a numpy
oracle, and the older releases' formulas relate to the newest one as their pages say."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


_ROWS, _COLS = st.integers(1, 3), st.integers(1, 5)


@st.composite
def pairs(draw, rows=_ROWS, cols=_COLS):
    """One micro-batch of pairs: per-token log-probabilities of the policy and the reference on each side, and
    masks with at least one completion token per row."""
    b, t = draw(rows), draw(cols)

    def logps():
        return torch.tensor(draw(st.lists(st.lists(st.floats(-6, -0.01), min_size=t, max_size=t),
                                          min_size=b, max_size=b)))

    def mask():
        lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
        return torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths])

    return dict(logps_chosen=logps(), ref_logps_chosen=logps(), mask_chosen=mask(),
                logps_rejected=logps(), ref_logps_rejected=logps(), mask_rejected=mask())


def window(batches: list[dict]) -> dict:
    return {k: [b[k] for b in batches] for k in batches[0]}


def pad(batches: list[dict], value: float = -50.0) -> list[dict]:
    """Append one padding column (mask 0, an extreme log-probability) to every tensor."""
    out = []
    for b in batches:
        col = torch.full((b["mask_chosen"].shape[0], 1), value)
        new = {}
        for k, v in b.items():
            new[k] = torch.cat([v, torch.zeros_like(col) if k.startswith("mask") else col], 1)
        out.append(new)
    return out


def as_reference(batches: list[dict]) -> list[dict]:
    """The same batches with the policy equal to the reference."""
    return [{**b, "logps_chosen": b["ref_logps_chosen"], "logps_rejected": b["ref_logps_rejected"]} for b in batches]


REWARDS = ["dpo/rewards/chosen", "dpo/rewards/rejected", "dpo/rewards/margins"]


def call(metric_id: str, w: dict, release: str | None = None, **extra):
    fn = snippet(metric_id, release)
    names = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in {**w, **extra}.items() if k in names})


@pytest.mark.parametrize("metric_id", REWARDS + ["dpo/rewards/accuracies"])
@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3), beta=st.floats(0.01, 1.0))
def test_rewards_are_zero_while_the_policy_is_the_reference(metric_id, batches, beta):
    """Before the first update every implicit reward is 0, and every comparison a tie, so accuracy 0, not 0.5."""
    assert call(metric_id, window(as_reference(batches)), beta=beta) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("metric_id", REWARDS)
@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3), beta=st.floats(0.01, 1.0))
def test_rewards_scale_linearly_with_beta(metric_id, batches, beta):
    w = window(batches)
    assert call(metric_id, w, beta=2 * beta) == pytest.approx(2 * call(metric_id, w, beta=beta), rel=1e-4, abs=1e-5)


@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3), beta=st.floats(0.01, 1.0))
def test_margins_are_chosen_minus_rejected(batches, beta):
    w = window(batches)
    chosen = call("dpo/rewards/chosen", w, beta=beta)
    rejected = call("dpo/rewards/rejected", w, beta=beta)
    assert call("dpo/rewards/margins", w, beta=beta) == pytest.approx(chosen - rejected, abs=1e-5)


@SETTINGS
@given(batches=st.lists(pairs(rows=st.just(1)), min_size=1, max_size=4), beta=st.floats(0.01, 1.0))
def test_accuracy_of_single_pairs_is_the_sign_of_the_margin(batches, beta):
    """With one pair per micro-batch each micro-batch value is 0 or 1: the window mean counts strictly positive
    margins."""
    w = window(batches)
    margins = [call("dpo/rewards/margins", window([b]), beta=beta) for b in batches]
    expected = sum(1.0 for m in margins if m > 1e-6) / len(margins)
    if all(abs(m) > 1e-6 for m in margins):  # leave out float ties
        assert call("dpo/rewards/accuracies", w, beta=beta) == pytest.approx(expected)


@pytest.mark.parametrize("metric_id", REWARDS + ["dpo/rewards/accuracies", "dpo/logps/chosen", "dpo/logps/rejected",
                                                  "dpo/loss"])
@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3), value=st.sampled_from([-50.0, -0.001]))
def test_padding_changes_nothing(metric_id, batches, value):
    w, padded = window(batches), window(pad(batches, value))
    assert call(metric_id, padded, beta=0.3) == pytest.approx(call(metric_id, w, beta=0.3), abs=1e-5)


@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3))
def test_logps_are_sums_over_the_completion(batches):
    """A numpy oracle: mean over micro-batches of the mean over pairs of the masked sum."""
    per_mb = [np.mean((b["logps_chosen"].numpy() * b["mask_chosen"].numpy()).sum(1)) for b in batches]
    assert call("dpo/logps/chosen", window(batches)) == pytest.approx(float(np.mean(per_mb)), abs=1e-4)


@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3))
def test_ipo_logps_of_older_releases_are_per_token_means(batches):
    """TRL < 0.29 with IPO: the logged value lies between the smallest and the largest per-token log-probability."""
    w = window(batches)
    value = call("dpo/logps/chosen", w, release="0.14.0", loss_type="ipo")
    real = torch.cat([b["logps_chosen"][b["mask_chosen"].bool()] for b in batches])
    assert float(real.min()) - 1e-5 <= value <= float(real.max()) + 1e-5


@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=3), beta=st.floats(0.01, 1.0))
def test_sigmoid_loss_matches_a_numpy_oracle_and_starts_at_log_2(batches, beta):
    w = window(batches)
    per_mb = []
    for b in batches:
        c = ((b["logps_chosen"] - b["ref_logps_chosen"]) * b["mask_chosen"]).sum(1).numpy().astype(np.float64)
        r = ((b["logps_rejected"] - b["ref_logps_rejected"]) * b["mask_rejected"]).sum(1).numpy().astype(np.float64)
        per_mb.append(np.mean(np.log1p(np.exp(-beta * (c - r)))))
    assert call("dpo/loss", w, beta=beta) == pytest.approx(float(np.mean(per_mb)), rel=1e-4, abs=1e-5)
    assert call("dpo/loss", window(as_reference(batches)), beta=beta) == pytest.approx(math.log(2), abs=1e-6)


@SETTINGS
@given(batches=st.lists(pairs(), min_size=1, max_size=2), beta=st.floats(0.05, 1.0),
       weights=st.lists(st.floats(0.1, 2.0), min_size=1, max_size=3))
def test_older_rewards_are_multiplied_by_the_sum_of_the_loss_weights(batches, beta, weights):
    """TRL 0.20-0.28 adds one weighted copy of the reward per loss type (none of them IPO)."""
    w = window(batches)
    old = call("dpo/rewards/chosen", w, release="0.14.0", beta=beta, loss_weights=weights)
    assert old == pytest.approx(sum(weights) * call("dpo/rewards/chosen", w, beta=beta), rel=1e-4, abs=1e-5)


@st.composite
def logits(draw):
    b, t, v = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(2, 6))
    z = torch.tensor(draw(st.lists(st.lists(st.lists(st.floats(-8, 8), min_size=v, max_size=v), min_size=t,
                                            max_size=t), min_size=b, max_size=b)))
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths])
    labels = torch.tensor(draw(st.lists(st.lists(st.integers(0, v - 1), min_size=t, max_size=t), min_size=b,
                                        max_size=b)))
    return z, mask, labels


@SETTINGS
@given(data=st.lists(logits(), min_size=1, max_size=3), shift=st.floats(-5, 5))
def test_entropy_is_bounded_and_blind_to_a_shift_of_the_logits(data, shift):
    z, mask = [d[0] for d in data], [d[1] for d in data]
    value = call("dpo/entropy", dict(logits=z, mask=mask))
    vocab = z[0].shape[-1]
    assert -1e-6 <= value <= math.log(vocab) + 1e-6
    shifted = call("dpo/entropy", dict(logits=[x + shift for x in z], mask=mask))
    assert shifted == pytest.approx(value, abs=1e-5)


@SETTINGS
@given(data=st.lists(logits(), min_size=1, max_size=3), shift=st.floats(-5, 5))
def test_vocabulary_mean_logit_moves_with_a_shift_the_softmax_ignores(data, shift):
    """logits/chosen follows a constant added to every logit one for one, while entropy and accuracy do not move."""
    z, mask, labels = [d[0] for d in data], [d[1] for d in data], [d[2] for d in data]
    base = call("dpo/logits/chosen", dict(logits_chosen=z, mask_chosen=mask))
    moved = call("dpo/logits/chosen", dict(logits_chosen=[x + shift for x in z], mask_chosen=mask))
    assert moved == pytest.approx(base + shift, abs=1e-4)
    acc = dict(logits_chosen=z, labels_chosen=labels, mask_chosen=mask)
    acc_moved = {**acc, "logits_chosen": [x + shift for x in z]}
    value = call("dpo/mean_token_accuracy", acc)
    assert 0.0 <= value <= 1.0
    assert call("dpo/mean_token_accuracy", acc_moved) == pytest.approx(value, abs=1e-7)


@SETTINGS
@given(data=st.lists(logits(), min_size=1, max_size=3))
def test_oldest_logits_mean_covers_every_position(data):
    """TRL < 0.12 averages every position of the padded rows: with all positions unmasked it equals the plain mean."""
    z = [d[0] for d in data]
    old = call("dpo/logits/chosen", dict(all_logits_chosen=z), release="0.7.10")
    assert old == pytest.approx(float(np.mean([x.numpy().mean() for x in z])), abs=1e-5)


@SETTINGS
@given(masks=st.lists(st.lists(st.lists(st.integers(0, 1), min_size=3, max_size=3), min_size=2, max_size=2),
                      min_size=1, max_size=4))
def test_num_tokens_is_a_running_total(masks):
    tensors = [torch.tensor(m) for m in masks]
    total = call("dpo/num_tokens", dict(attention_mask=tensors))
    assert total == float(sum(int(t.sum()) for t in tensors))
    if len(tensors) > 1:
        assert call("dpo/num_tokens", dict(attention_mask=tensors[:-1])) <= total
