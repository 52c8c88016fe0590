"""Invariants of the KTO formulas, checked with hypothesis on the snippets taken from the YAML files: the implicit
rewards are zero while the policy is the reference and scale with beta, the reference point is never negative and
its window mean never undercuts the floored mean, the loss starts at half the weights and matches a numpy oracle,
padding changes nothing, log-probabilities are sums over the completion, the entropy lies in [0, ln V], and the
0.26-1.5 window (sums over counts) differs from the 1.6+ window (mean of micro-batch means) exactly when the
micro-batches hold different class counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


REWARDS = ["kto/rewards/chosen", "kto/rewards/rejected"]


@st.composite
def unpaired(draw, both_classes=False):
    """One micro-batch of KTO rows: summed policy and reference log-probabilities [B] and labels [B]."""
    b = draw(st.integers(2 if both_classes else 1, 5))
    labels = draw(st.lists(st.booleans(), min_size=b, max_size=b))
    if both_classes:
        labels[0], labels[1] = True, False
    logps = draw(st.lists(st.floats(-40, -0.5), min_size=b, max_size=b))
    ref = draw(st.lists(st.floats(-40, -0.5), min_size=b, max_size=b))
    return torch.tensor(logps, dtype=torch.float64), torch.tensor(ref, dtype=torch.float64), torch.tensor(labels)


def _window(batches):
    logps, ref, labels = zip(*batches, strict=True)
    return list(logps), list(ref), list(labels)


def _has(labels, desirable: bool) -> bool:
    return any(bool((lab if desirable else ~lab).any()) for lab in labels)


# --- implicit rewards -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric_id", REWARDS)
@SETTINGS
@given(batches=st.lists(unpaired(), min_size=1, max_size=3))
def test_rewards_are_zero_while_the_policy_is_the_reference(metric_id, batches):
    logps, _, labels = _window(batches)
    assume(_has(labels, metric_id.endswith("chosen")))
    assert snippet(metric_id)(logps, [x.clone() for x in logps], labels) == 0.0


@pytest.mark.parametrize("metric_id", [*REWARDS, "kto/rewards/margins"])
@SETTINGS
@given(batches=st.lists(unpaired(both_classes=True), min_size=1, max_size=3), factor=st.floats(0.5, 8))
def test_rewards_scale_with_beta(metric_id, batches, factor):
    logps, ref, labels = _window(batches)
    f = snippet(metric_id)
    assert f(logps, ref, labels, beta=0.1 * factor) == pytest.approx(
        factor * f(logps, ref, labels, beta=0.1), rel=1e-9, abs=1e-12
    )


@SETTINGS
@given(batches=st.lists(unpaired(both_classes=True), min_size=1, max_size=3), beta=st.floats(0.01, 1))
def test_rewards_match_a_numpy_oracle_of_the_mean_of_micro_batch_means(batches, beta):
    logps, ref, labels = _window(batches)
    for metric_id, side in (("kto/rewards/chosen", True), ("kto/rewards/rejected", False)):
        means = [
            beta * np.mean((lp - r).numpy()[(lab if side else ~lab).numpy()])
            for lp, r, lab in zip(logps, ref, labels, strict=True)
        ]
        assert snippet(metric_id)(logps, ref, labels, beta=beta) == pytest.approx(float(np.mean(means)), rel=1e-9)


@SETTINGS
@given(batches=st.lists(unpaired(both_classes=True), min_size=1, max_size=3))
def test_margins_are_the_mean_of_per_micro_batch_differences(batches):
    """With both classes in every micro-batch the margin is the logged chosen minus the logged rejected; it is the
    micro-batch with one class only that breaks the identity (test below)."""
    logps, ref, labels = _window(batches)
    chosen, rejected = (
        snippet("kto/rewards/chosen")(logps, ref, labels),
        snippet("kto/rewards/rejected")(logps, ref, labels),
    )
    assert snippet("kto/rewards/margins")(logps, ref, labels) == pytest.approx(chosen - rejected, rel=1e-9, abs=1e-12)


def test_a_single_class_micro_batch_breaks_margin_equals_chosen_minus_rejected():
    logps = [torch.tensor([-1.0, -4.0]), torch.tensor([-2.0])]
    ref = [torch.tensor([-2.0, -2.0]), torch.tensor([-5.0])]
    labels = [torch.tensor([True, False]), torch.tensor([True])]
    chosen = snippet("kto/rewards/chosen")(logps, ref, labels)  # (0.1 + 0.3) / 2 = 0.2
    rejected = snippet("kto/rewards/rejected")(logps, ref, labels)  # -0.2
    margins = snippet("kto/rewards/margins")(logps, ref, labels)  # only micro-batch 1: 0.1 + 0.2 = 0.3
    assert chosen == pytest.approx(0.2) and rejected == pytest.approx(-0.2) and margins == pytest.approx(0.3)
    assert margins != pytest.approx(chosen - rejected)


@pytest.mark.parametrize("metric_id", REWARDS)
@SETTINGS
@given(batches=st.lists(unpaired(both_classes=True), min_size=1, max_size=3))
def test_pooled_and_per_micro_batch_windows_agree_when_class_counts_are_equal(metric_id, batches):
    """0.26-1.5 pool the window (sum / count); 1.6+ average micro-batch means: equal when every micro-batch holds
    the same number of rows of the class."""
    logps, ref, labels = _window(batches)
    side = metric_id.endswith("chosen")
    counts = {int((lab if side else ~lab).sum()) for lab in labels}
    new, old = snippet(metric_id)(logps, ref, labels), snippet(metric_id, "0.26.0")(logps, ref, labels)
    if len(counts) == 1:
        assert new == pytest.approx(old, rel=1e-9, abs=1e-12)


def test_pooled_and_per_micro_batch_windows_differ_with_unequal_counts():
    logps = [torch.tensor([-1.0, -2.0]), torch.tensor([-3.0])]
    ref = [torch.tensor([-2.0, -4.0]), torch.tensor([-2.0])]  # desirable log-ratios +1, +2 | -1
    labels = [torch.tensor([True, True]), torch.tensor([True])]
    assert snippet("kto/rewards/chosen")(logps, ref, labels) == pytest.approx(0.025)  # (0.15 - 0.1) / 2
    assert snippet("kto/rewards/chosen", "0.26.0")(logps, ref, labels) == pytest.approx(0.2 / 3)


# --- the reference point ----------------------------------------------------------------------------------------


@st.composite
def mismatched(draw):
    """The summed log-probabilities of the mismatched completions, [P, b], under the policy and the reference."""
    p, b = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    a = draw(st.lists(st.floats(-30, -0.5), min_size=p * b, max_size=p * b))
    r = draw(st.lists(st.floats(-30, -0.5), min_size=p * b, max_size=p * b))
    return torch.tensor(a, dtype=torch.float64).view(p, b), torch.tensor(r, dtype=torch.float64).view(p, b)


@SETTINGS
@given(batches=st.lists(mismatched(), min_size=1, max_size=4))
def test_kl_is_never_negative_and_never_below_the_floored_window_mean(batches):
    policy, ref = zip(*batches, strict=True)
    value = snippet("kto/kl")(list(policy), list(ref))
    raw = [(a - r).mean().item() for a, r in batches]
    assert value >= 0.0
    assert value >= max(float(np.mean(raw)), 0.0) - 1e-12  # mean of floors >= floor of the mean


@SETTINGS
@given(batches=st.lists(mismatched(), min_size=1, max_size=4))
def test_kl_is_zero_for_equal_policies_and_under_apo_zero_unpaired(batches):
    policy, ref = zip(*batches, strict=True)
    assert snippet("kto/kl")(list(policy), [p.clone() for p in policy]) == 0.0
    assert snippet("kto/kl")(list(policy), list(ref), loss_type="apo_zero_unpaired") == 0.0


def test_kl_floors_each_micro_batch_before_the_window_mean():
    policy = [torch.tensor([[0.75, -0.25], [-0.25, 0.25]]), torch.tensor([[-0.5, 0.0], [0.25, -0.25]])]
    ref = [torch.zeros(2, 2), torch.zeros(2, 2)]
    assert snippet("kto/kl")(policy, ref) == pytest.approx(0.0625)  # (0.125 + 0) / 2, raw estimates average 0


# --- the loss ---------------------------------------------------------------------------------------------------


def _loss_args(batches, kl_shift=0.0):
    logps, ref, labels = _window(batches)
    kl_logps = [lp.flip(0) + kl_shift for lp in logps]
    kl_ref = [r.flip(0) for r in ref]
    return logps, ref, kl_logps, kl_ref, labels


@pytest.mark.parametrize("loss_type", ["kto", "apo_zero_unpaired"])
@SETTINGS
@given(batches=st.lists(unpaired(), min_size=1, max_size=3), w=st.tuples(st.floats(0.1, 3), st.floats(0.1, 3)))
def test_loss_is_half_the_weights_while_the_policy_is_the_reference(loss_type, batches, w):
    logps, _, labels = _window(batches)
    same = [x.clone() for x in logps]
    value = snippet("kto/loss")(
        logps,
        same,
        [x.flip(0) for x in logps],
        [x.flip(0) for x in same],
        labels,
        desirable_weight=w[0],
        undesirable_weight=w[1],
        loss_type=loss_type,
    )
    expected = np.mean([np.mean(np.where(lab.numpy(), w[0], w[1]) * 0.5) for lab in labels])
    assert value == pytest.approx(float(expected), rel=1e-9)


@SETTINGS
@given(batches=st.lists(unpaired(), min_size=1, max_size=3), beta=st.floats(0.01, 1), kl_shift=st.floats(-5, 5))
def test_loss_matches_a_numpy_oracle_and_stays_within_the_weights(batches, beta, kl_shift):
    args = _loss_args(batches, kl_shift)
    value = snippet("kto/loss")(*args, beta=beta, desirable_weight=1.5, undesirable_weight=0.5)
    per_mb = []
    for lp, r, kl_lp, kl_r, lab in zip(*args, strict=True):
        x, z0 = (lp - r).numpy(), max(float(np.mean((kl_lp - kl_r).numpy())), 0.0)
        sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        terms = np.where(lab.numpy(), 1.5 * (1 - sig(beta * (x - z0))), 0.5 * (1 - sig(beta * (z0 - x))))
        per_mb.append(terms.mean())
    assert value == pytest.approx(float(np.mean(per_mb)), rel=1e-9)
    assert 0.0 <= value <= 1.5


def test_raising_a_desirable_reward_lowers_the_loss():
    labels = [torch.tensor([True, False])]
    ref = [torch.tensor([-5.0, -5.0])]
    kl = [torch.tensor([-5.0, -5.0])]
    low = snippet("kto/loss")([torch.tensor([-5.0, -5.0])], ref, kl, kl, labels)
    high = snippet("kto/loss")([torch.tensor([-1.0, -5.0])], ref, kl, kl, labels)
    assert high < low == pytest.approx(0.5)


# --- log-probabilities, logits, entropy, tokens -----------------------------------------------------------------


@st.composite
def token_batch(draw, vocab=None):
    """token log-probabilities [B, T] (or logits [B, T, V]), a completion mask with one token per row at least, and
    labels with both classes."""
    b, t = draw(st.integers(2, 4)), draw(st.integers(1, 5))
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths], dtype=torch.float64)
    labels = draw(st.lists(st.booleans(), min_size=b, max_size=b))
    labels[0], labels[1] = True, False
    shape = (b, t) if vocab is None else (b, t, vocab)
    n = math.prod(shape)
    lo, hi = (-8.0, -0.01) if vocab is None else (-6.0, 6.0)
    values = torch.tensor(draw(st.lists(st.floats(lo, hi), min_size=n, max_size=n)), dtype=torch.float64)
    return values.view(shape), mask, torch.tensor(labels)


def _pad_columns(batches, value):
    out = []
    for x, m, lab in batches:
        pad_shape = (x.shape[0], 2, *x.shape[2:])
        out.append(
            (
                torch.cat([x, torch.full(pad_shape, value, dtype=x.dtype)], 1),
                torch.cat([m, torch.zeros(m.shape[0], 2, dtype=m.dtype)], 1),
                lab,
            )
        )
    return out


@pytest.mark.parametrize("metric_id", ["kto/logps/chosen", "kto/logps/rejected"])
@SETTINGS
@given(batches=st.lists(token_batch(), min_size=1, max_size=3))
def test_logps_are_sums_never_positive_and_ignore_padding(metric_id, batches):
    f = snippet(metric_id)
    value = f(*zip(*batches, strict=True))
    assert value <= 0.0
    assert f(*zip(*_pad_columns(batches, -7.0), strict=True)) == pytest.approx(value, rel=1e-12)
    # a sum, not a mean: doubling every token's log-probability doubles the value
    doubled = [(2 * x, m, lab) for x, m, lab in batches]
    assert f(*zip(*doubled, strict=True)) == pytest.approx(2 * value, rel=1e-12)


@pytest.mark.parametrize("metric_id", ["kto/logits/chosen", "kto/logits/rejected"])
@SETTINGS
@given(batches=st.lists(token_batch(vocab=3), min_size=1, max_size=3), shift=st.floats(-3, 3))
def test_logits_ignore_padding_and_follow_a_constant_shift(metric_id, batches, shift):
    f = snippet(metric_id)
    value = f(*zip(*batches, strict=True))
    assert f(*zip(*_pad_columns(batches, 50.0), strict=True)) == pytest.approx(value, rel=1e-12, abs=1e-12)
    shifted = [(x + shift, m, lab) for x, m, lab in batches]
    assert f(*zip(*shifted, strict=True)) == pytest.approx(value + shift, rel=1e-9, abs=1e-9)


@SETTINGS
@given(batches=st.lists(token_batch(vocab=4), min_size=1, max_size=3))
def test_entropy_lies_between_zero_and_log_vocab_and_ignores_padding(batches):
    f = snippet("kto/entropy")
    logits, masks, _ = zip(*batches, strict=True)
    value = f(list(logits), list(masks))
    assert -1e-12 <= value <= math.log(4) + 1e-12
    padded = _pad_columns(batches, 0.0)
    assert f([x for x, _, _ in padded], [m for _, m, _ in padded]) == pytest.approx(value, rel=1e-12)
    uniform = [torch.zeros_like(x) for x in logits]
    assert f(uniform, list(masks)) == pytest.approx(math.log(4), rel=1e-12)


@SETTINGS
@given(masks=st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=6), min_size=1, max_size=5))
def test_num_tokens_is_a_running_total_that_never_falls(masks):
    f = snippet("kto/num_tokens")
    tensors = [torch.tensor([m]) for m in masks]
    totals = [f(tensors[: i + 1]) for i in range(len(tensors))]
    assert totals == sorted(totals)
    assert totals[-1] == float(sum(sum(m) for m in masks))
