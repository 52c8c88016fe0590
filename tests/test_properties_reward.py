"""Invariants of the Reward pages' formulas, checked with hypothesis on the snippets taken from the YAML files: bounds,
ties, symmetry under swapping chosen and rejected, invariance to a common shift of the scores, independent numpy
oracles, and the differences between TRL's releases (pooled vs. per-batch accuracy, one margin per pair vs. the old
[B, B] broadcast)."""

from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


# scores on a coarse grid, so that ties happen often
score = st.integers(-6, 6).map(lambda k: k / 2)


@st.composite
def micro_batch(draw):
    """(rewards_chosen [B], rewards_rejected [B], margin [B]) of one micro-batch."""
    b = draw(st.integers(1, 4))
    chosen = torch.tensor([draw(score) for _ in range(b)])
    rejected = torch.tensor([draw(score) for _ in range(b)])
    margin = torch.tensor([draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for _ in range(b)])
    return chosen, rejected, margin


windows = st.lists(micro_batch(), min_size=1, max_size=4)


def _pairs(batches):
    return [c for c, _, _ in batches], [r for _, r, _ in batches]


def _swap(batches):
    return [(r, c, m) for c, r, m in batches]


def _shift(batches, by: float):
    return [(c + by, r + by, m) for c, r, m in batches]


# --------------------------------------------------------------------------------------------------------------------
# accuracy
# --------------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(batches=windows)
def test_accuracy_is_a_mean_of_per_batch_fractions_with_ties_wrong(batches):
    fn = snippet("reward/accuracy")
    got = fn(*_pairs(batches))
    oracle = np.mean([np.mean(c.numpy() > r.numpy()) for c, r, _ in batches])
    assert 0.0 <= got <= 1.0
    assert math.isclose(got, oracle, abs_tol=1e-6)


@SETTINGS
@given(batches=windows)
def test_accuracy_of_both_orders_and_the_ties_add_up_to_one(batches):
    fn = snippet("reward/accuracy")
    ties = float(np.mean([np.mean(c.numpy() == r.numpy()) for c, r, _ in batches]))
    assert math.isclose(fn(*_pairs(batches)) + fn(*_pairs(_swap(batches))) + ties, 1.0, abs_tol=1e-6)


@SETTINGS
@given(batches=windows, by=st.floats(-50, 50))
def test_accuracy_and_margin_ignore_a_common_shift_of_the_scores(batches, by):
    shifted = _shift(batches, by)
    for key in ("accuracy", "margin"):
        fn = snippet(f"reward/{key}")
        assert math.isclose(fn(*_pairs(batches)), fn(*_pairs(shifted)), abs_tol=1e-4), key


def test_every_score_equal_logs_zero_accuracy_now_one_before_0_13_nan_in_between():
    same = [torch.full((3,), 0.25)], [torch.full((3,), 0.25)]
    assert snippet("reward/accuracy")(*same) == 0.0
    assert snippet("reward/accuracy", since="0.7.10")(*same) == 1.0
    assert math.isnan(snippet("reward/accuracy", since="0.13.0")(*same))


@SETTINGS
@given(batches=windows)
def test_old_eval_accuracies_are_pooled_and_differ_only_in_ties(batches):
    c, r = _pairs(batches)
    pooled_c, pooled_r = torch.cat(c).numpy(), torch.cat(r).numpy()
    before_0_13 = snippet("reward/accuracy", since="0.7.10")(c, r)
    assert math.isclose(before_0_13, float(np.mean(pooled_c >= pooled_r)), abs_tol=1e-6)
    kept = pooled_c != pooled_r
    from_0_13 = snippet("reward/accuracy", since="0.13.0")(c, r)
    if kept.any():
        assert math.isclose(from_0_13, float(np.mean(pooled_c[kept] > pooled_r[kept])), abs_tol=1e-6)
    else:
        assert math.isnan(from_0_13)
    # counting ties as right can only raise the share
    assert before_0_13 >= (from_0_13 if kept.any() else 0.0) * kept.mean() - 1e-9


def test_a_small_last_batch_weighs_as_much_as_a_full_one():
    """Two batches: 3 pairs with 1 right, 1 pair right. The logged 0.6667 is not the pooled 2/4."""
    c = [torch.tensor([1.0, 0.5, 0.2]), torch.tensor([2.0])]
    r = [torch.tensor([0.0, 0.5, 0.7]), torch.tensor([1.0])]
    assert math.isclose(snippet("reward/accuracy")(c, r), (1 / 3 + 1) / 2, abs_tol=1e-6)
    assert math.isclose(snippet("reward/accuracy", since="0.13.0")(c, r), 2 / 3, abs_tol=1e-6)  # tie left out
    assert math.isclose(snippet("reward/accuracy", since="0.7.10")(c, r), 3 / 4, abs_tol=1e-6)  # tie is right


# --------------------------------------------------------------------------------------------------------------------
# margin and the three score statistics
# --------------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(batches=windows)
def test_margin_is_antisymmetric_and_is_the_mean_gap_per_batch(batches):
    fn = snippet("reward/margin")
    got = fn(*_pairs(batches))
    assert math.isclose(got, -fn(*_pairs(_swap(batches))), abs_tol=1e-6)
    oracle = np.mean([np.mean(c.numpy() - r.numpy()) for c, r, _ in batches])
    assert math.isclose(got, oracle, abs_tol=1e-5)


@SETTINGS
@given(batches=windows, by=st.integers(-20, 20).map(float))
def test_min_mean_max_are_ordered_match_numpy_and_follow_a_shift(batches, by):
    stats = {k: snippet(f"reward/{k}") for k in ("min_reward", "mean_reward", "max_reward")}
    got = {k: fn(*_pairs(batches)) for k, fn in stats.items()}
    assert got["min_reward"] <= got["mean_reward"] + 1e-6 <= got["max_reward"] + 2e-6
    both = [np.concatenate([c.numpy(), r.numpy()]) for c, r, _ in batches]
    for k, reduce in (("min_reward", np.min), ("mean_reward", np.mean), ("max_reward", np.max)):
        assert math.isclose(got[k], float(np.mean([reduce(x) for x in both])), abs_tol=1e-5), k
        assert math.isclose(stats[k](*_pairs(_shift(batches, by))), got[k] + by, abs_tol=1e-4), k
    # chosen and rejected play the same part in the three statistics
    for k, fn in stats.items():
        assert math.isclose(fn(*_pairs(_swap(batches))), got[k], abs_tol=1e-6), k


def test_a_window_of_one_pair_batches_has_min_equal_to_max_only_when_each_pair_ties():
    c, r = [torch.tensor([1.0]), torch.tensor([-1.0])], [torch.tensor([1.0]), torch.tensor([-1.0])]
    assert snippet("reward/min_reward")(c, r) == snippet("reward/max_reward")(c, r) == 0.0
    r[0] = torch.tensor([3.0])
    assert snippet("reward/min_reward")(c, r) < snippet("reward/max_reward")(c, r)


# --------------------------------------------------------------------------------------------------------------------
# loss
# --------------------------------------------------------------------------------------------------------------------


def _loss(fn, batches, coef, use_margin=True, steps=None):
    steps = steps or [len(batches)] * len(batches)
    c, r = _pairs(batches)
    margin = [m if use_margin else None for _, _, m in batches]
    return fn(
        rewards_chosen=c,
        rewards_rejected=r,
        margin=margin,
        center_rewards_coefficient=coef,
        gradient_accumulation_steps=steps,
        num_optimizer_steps=1,
    )


@SETTINGS
@given(batches=windows, coef=st.sampled_from([None, 0.0, 0.01, 0.5]))
def test_loss_of_one_step_matches_numpy_and_is_positive(batches, coef):
    got = _loss(snippet("reward/loss"), batches, coef)
    parts = []
    for c, r, m in batches:
        c, r, m = c.double().numpy(), r.double().numpy(), m.double().numpy()
        value = np.mean(np.log1p(np.exp(-(c - r - m))))
        parts.append(value + (coef or 0.0) * np.mean((c + r) ** 2))
    assert got > 0
    assert math.isclose(got, float(np.mean(parts)), rel_tol=1e-5, abs_tol=1e-6)


@SETTINGS
@given(batches=windows, by=st.floats(-20, 20))
def test_without_centring_the_loss_ignores_a_common_shift_and_centring_only_adds(batches, by):
    fn = snippet("reward/loss")
    plain = _loss(fn, batches, None)
    assert math.isclose(plain, _loss(fn, _shift(batches, by), None), rel_tol=1e-4, abs_tol=1e-5)
    assert _loss(fn, batches, 0.01) >= plain - 1e-7
    assert math.isclose(_loss(fn, batches, 0.0), plain, abs_tol=1e-7)


@SETTINGS
@given(batches=windows)
def test_equal_scores_and_no_margin_give_ln_2(batches):
    tied = [(c, c.clone(), m) for c, _, m in batches]
    assert math.isclose(_loss(snippet("reward/loss"), tied, None, use_margin=False), math.log(2), rel_tol=1e-6)


@SETTINGS
@given(batches=windows)
def test_a_margin_makes_each_pair_harder(batches):
    fn = snippet("reward/loss")
    assert _loss(fn, batches, None, use_margin=True) >= _loss(fn, batches, None, use_margin=False) - 1e-7


@SETTINGS
@given(batches=windows)
def test_the_old_broadcast_equals_one_margin_per_pair_only_when_the_batch_margins_agree(batches):
    new, old = snippet("reward/loss"), snippet("reward/loss", since="0.10.1")
    same_margin = all(bool((m == m[0]).all()) for _, _, m in batches)
    new_value, old_value = _loss(new, batches, 0.01), _loss(old, batches, 0.01)
    if same_margin:
        assert math.isclose(new_value, old_value, rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(
        _loss(new, batches, 0.01, use_margin=False),
        _loss(old, batches, 0.01, use_margin=False),
        rel_tol=1e-5,
        abs_tol=1e-6,
    )


def test_the_old_broadcast_differs_on_the_page_example():
    """Gaps (1, 3), margins (0, 2): every pair against every margin gives 0.4971, one margin per pair 0.3133."""
    batches = [(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 0.0]), torch.tensor([0.0, 2.0]))]
    new = _loss(snippet("reward/loss"), batches, None, steps=[1])
    old = _loss(snippet("reward/loss", since="0.10.1"), batches, None, steps=[1])
    assert math.isclose(new, 0.3133, abs_tol=1e-4) and math.isclose(old, 0.4971, abs_tol=1e-4)


# --------------------------------------------------------------------------------------------------------------------
# num_tokens
# --------------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(rows=st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=6), min_size=1, max_size=5))
def test_num_tokens_counts_real_tokens_and_only_grows(rows):
    fn = snippet("reward/num_tokens")
    masks = [torch.tensor([row]) for row in rows]
    totals = [fn(attention_mask=masks[: i + 1]) for i in range(len(masks))]
    assert totals == sorted(totals)
    assert totals[-1] == sum(sum(row) for row in rows)
