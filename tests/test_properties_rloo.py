"""Invariants of the RLOO pages' formulas, checked with hypothesis on the snippets taken from the YAML files: bounds,
masked padding changes nothing, numpy oracles, what the KL penalty does to the tie count, and that RLOO's
sequence-level loss is exactly 0 on-policy when every micro-batch holds whole groups (leave-one-out advantages of a
group add up to 0)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


def leave_one_out(rewards: torch.Tensor, k: int) -> torch.Tensor:
    """Advantages as RLOOTrainer builds them (no NaN here): reward minus the mean of the group's other rewards."""
    g = rewards.view(-1, k)
    return (g - (g.sum(1, keepdim=True) - g) / (k - 1)).flatten()


@st.composite
def scores(draw, groups=(1, 3), k=(2, 4), funcs=(1, 3)):
    """(rewards_per_func [G*k, F] with whole-row NaN for some unscorable rows, reward_weights [F], k)."""
    g, kk, f = draw(st.integers(*groups)), draw(st.integers(*k)), draw(st.integers(*funcs))
    vals = draw(st.lists(st.integers(-3, 3), min_size=g * kk * f, max_size=g * kk * f))
    r = torch.tensor(vals, dtype=torch.float32).view(g * kk, f)
    w = torch.tensor(draw(st.lists(st.sampled_from([1.0, 0.5, -2.0]), min_size=f, max_size=f)))
    return r, w, kk


@st.composite
def completions(draw, rows=(2, 6), length=(1, 5)):
    """(old, ref, mask) [N, T] log-probs of a batch and a right-padded mask with at least one token per row."""
    n, t = draw(st.integers(*rows)), draw(st.integers(*length))
    old = torch.tensor(draw(st.lists(st.floats(-5, 0), min_size=n * t, max_size=n * t))).view(n, t)
    ref = torch.tensor(draw(st.lists(st.floats(-5, 0), min_size=n * t, max_size=n * t))).view(n, t)
    lengths = [draw(st.integers(1, t)) for _ in range(n)]
    mask = torch.tensor([[1 if j < length_ else 0 for j in range(t)] for length_ in lengths])
    return old.float(), ref.float(), mask


# --- rewards ---------------------------------------------------------------------------------------------------------


@SETTINGS
@given(scores())
def test_reward_is_the_numpy_mean_of_weighted_sums_over_scorable_rows(data):
    r, w, _ = data
    got = snippet("rloo/reward")([r], w)
    a = r.numpy()
    scorable = ~np.isnan(a).all(axis=1)
    sums = np.nansum(a * w.numpy(), axis=1)[scorable]
    if sums.size == 0:
        assert got is None
    else:
        assert math.isclose(got, float(sums.mean()), abs_tol=1e-5)


@SETTINGS
@given(scores(), st.integers(1, 3))
def test_an_unscorable_row_changes_neither_reward_nor_reward_std(data, extra):
    r, w, _ = data
    padded = torch.cat([r, torch.full((extra, r.shape[1]), float("nan"))])
    for key in ("rloo/reward", "rloo/reward_std"):
        a, b = snippet(key)([r], w), snippet(key)([padded], w)
        assert (a is None and b is None) or math.isclose(a, b, abs_tol=1e-6), key


@SETTINGS
@given(scores(), st.floats(-5, 5))
def test_reward_std_is_blind_to_a_constant_added_to_every_score(data, shift):
    r, w, _ = data
    r = torch.nan_to_num(r)  # every row scorable
    a = snippet("rloo/reward_std")([r], w)
    b = snippet("rloo/reward_std")([r + shift], w)
    assert a is not None and a >= 0
    assert math.isclose(a, b, abs_tol=1e-4)


# --- ties: frac_reward_zero_std -------------------------------------------------------------------------------------


@SETTINGS
@given(scores(funcs=(1, 1)), st.integers(1, 4))
def test_frac_reward_zero_std_is_a_fraction_and_counts_tied_groups_without_kl(data, t):
    r, w, k = data
    r = torch.nan_to_num(r)
    f = snippet("rloo/frac_reward_zero_std")
    got = f([r], w, k, beta=0.0)
    assert 0.0 <= got <= 1.0
    g = (r[:, 0] * w[0]).view(-1, k)
    tied = (g == g[:, :1]).all(1).float().mean().item()
    assert math.isclose(got, tied, abs_tol=1e-6)
    # the leave-one-out advantages of a tied group are all 0
    adv = leave_one_out(r[:, 0] * w[0], k).view(-1, k)
    assert torch.equal((adv.abs() < 1e-6).all(1), (g == g[:, :1]).all(1))


@SETTINGS
@given(st.integers(1, 3), st.sampled_from([2, 4]), st.floats(0.1, 2.0))
def test_the_kl_penalty_breaks_ties_that_the_raw_scores_have(groups, k, gap):
    n = groups * k
    r = torch.ones(n, 1)  # every group tied on the raw score
    w = torch.ones(1)
    old = torch.zeros(n, 2)
    ref = torch.zeros(n, 2)
    ref[0::k, 0] = -gap  # the first completion of each group drifted from the reference
    mask = torch.ones(n, 2)
    f = snippet("rloo/frac_reward_zero_std")
    assert f([r], w, k, beta=0.0, old_per_token_logps=[old], ref_per_token_logps=[ref], completion_mask=[mask]) == 1.0
    assert f([r], w, k, beta=0.1, old_per_token_logps=[old], ref_per_token_logps=[ref], completion_mask=[mask]) == 0.0


# --- kl ---------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(completions())
def test_kl_is_zero_at_the_reference_and_changes_sign_when_the_two_are_swapped(data):
    old, ref, mask = data
    kl = snippet("rloo/kl")
    assert kl([old], [old], [mask]) == 0.0
    assert math.isclose(kl([old], [ref], [mask]), -kl([ref], [old], [mask]), abs_tol=1e-5)


@SETTINGS
@given(completions(), st.floats(-50, 50))
def test_kl_ignores_what_sits_on_masked_positions(data, junk):
    old, ref, mask = data
    kl = snippet("rloo/kl")
    dirty = torch.where(mask.bool(), old, torch.full_like(old, junk))
    assert math.isclose(kl([old], [ref], [mask]), kl([dirty], [ref], [mask]), abs_tol=1e-6)


@SETTINGS
@given(completions())
def test_kl_is_a_token_mean_not_a_mean_of_sequence_means(data):
    old, ref, mask = data
    got = snippet("rloo/kl")([old], [ref], [mask])
    d, m = (old - ref).numpy(), mask.numpy()
    assert math.isclose(got, float((d * m).sum() / m.sum()), abs_tol=1e-5)


# --- the sequence-level ratio: clip ratios and loss ----------------------------------------------------------------


@st.composite
def micro_batches(draw):
    """One micro-batch of whole groups: (per_token_logps, old_logps, advantages, mask)."""
    old, new, mask = draw(completions(rows=(2, 6)))
    k = 2
    n = (old.shape[0] // k) * k
    old, new, mask = old[:n], new[:n], mask[:n]
    rewards = torch.tensor(draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), dtype=torch.float32)
    return new, (old * mask).sum(1), leave_one_out(rewards, k), mask


@SETTINGS
@given(micro_batches(), st.floats(0.01, 0.5), st.floats(0.01, 0.5))
def test_region_clip_is_low_plus_high_and_every_clip_key_is_a_fraction(mb, eps_low, eps_high):
    logp, old, adv, mask = mb
    args = ([logp], [old], [adv], [mask])
    low = snippet("rloo/clip_ratio/low_mean")(*args, epsilon_low=eps_low)
    high = snippet("rloo/clip_ratio/high_mean")(*args, epsilon_high=eps_high)
    region = snippet("rloo/clip_ratio/region_mean")(*args, epsilon_low=eps_low, epsilon_high=eps_high)
    low_min = snippet("rloo/clip_ratio/low_min")(*args, epsilon_low=eps_low)
    high_max = snippet("rloo/clip_ratio/high_max")(*args, epsilon_high=eps_high)
    for v in (low, high, region, low_min, high_max):
        assert 0.0 <= v <= 1.0
    assert math.isclose(region, low + high, abs_tol=1e-6)  # a completion's advantage has one sign
    assert low_min <= low and high <= high_max


@SETTINGS
@given(micro_batches(), st.integers(1, 3))
def test_on_policy_nothing_is_clipped_and_the_loss_of_whole_groups_is_zero(mb, ga):
    logp, _, adv, mask = mb
    old = (logp * mask).sum(1)  # the first pass over a generation batch: ratio exactly 1
    args = ([logp] * ga, [old] * ga, [adv] * ga, [mask] * ga)
    assert snippet("rloo/clip_ratio/region_mean")(*args) == 0.0
    assert abs(snippet("rloo/loss")(*args, gradient_accumulation_steps=ga)) < 1e-6


@SETTINGS
@given(micro_batches(), st.floats(0.05, 0.3))
def test_loss_matches_a_numpy_oracle_of_the_clipped_sequence_objective(mb, eps):
    logp, old, adv, mask = mb
    old = old + 0.3  # off-policy: every ratio is exp(-0.3) < 1
    got = snippet("rloo/loss")(
        [logp], [old], [adv], [mask], gradient_accumulation_steps=1, epsilon_low=eps, epsilon_high=eps
    )
    ratio = np.exp((logp * mask).sum(1).numpy() - old.numpy())
    a = adv.numpy()
    want = float(np.mean(-np.minimum(ratio * a, np.clip(ratio, 1 - eps, 1 + eps) * a)))
    assert math.isclose(got, want, abs_tol=1e-5)


# --- entropy and epoch -----------------------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 4), st.integers(2, 6), st.floats(-3, 3), st.data())
def test_entropy_is_bounded_by_log_vocab_and_blind_to_a_shift_of_the_logits(b, t, v, shift, data):
    z = torch.tensor(data.draw(st.lists(st.floats(-4, 4), min_size=b * t * v, max_size=b * t * v))).view(b, t, v)
    mask = torch.ones(b, t)
    h = snippet("rloo/entropy")
    got = h([z], [mask])
    assert -1e-6 <= got <= math.log(v) + 1e-6
    assert math.isclose(got, h([z + shift], [mask]), abs_tol=1e-4)


@SETTINGS
@given(st.integers(1, 40), st.sampled_from([2, 4]), st.integers(1, 4), st.integers(1, 3), st.integers(1, 2))
def test_epoch_rises_and_hits_whole_numbers_at_the_end_of_each_epoch(num_prompts, k, b, ga, iters):
    f = snippet("rloo/epoch")
    prompts_per_chunk = b * ga // k
    if prompts_per_chunk == 0 or num_prompts < prompts_per_chunk:
        return  # RLOOConfig refuses batches smaller than a group; an empty dataloader cannot train
    updates = math.ceil((num_prompts // prompts_per_chunk) * ga * iters / ga)
    steps = torch.arange(1, 3 * updates + 1)
    got = f(steps, num_prompts, k, b, ga, num_iterations=iters)
    assert all(x < y for x, y in zip(got, got[1:], strict=False))
    assert [got[updates * e - 1] for e in (1, 2, 3)] == [1.0, 2.0, 3.0]


# --------------------------------------------------------------------------------------------------------------------
# The PPO-style RLOOTrainer of TRL 0.9.2 to 0.21 (the 0.11 line)
# --------------------------------------------------------------------------------------------------------------------

INVALID_LOGPROB = 1.0


@st.composite
def rollouts(draw, k=(2, 4), prompts=(1, 3), length=(1, 5)):
    """(logprobs, ref_logprobs, lengths, k) of a PPO-style RLOO rollout: rows are k blocks of the same prompts, and
    both tensors hold INVALID_LOGPROB after each response's end."""
    kk, p, t = draw(st.integers(*k)), draw(st.integers(*prompts)), draw(st.integers(*length))
    n = kk * p
    lp = torch.tensor(draw(st.lists(st.floats(-5, -0.01), min_size=n * t, max_size=n * t))).view(n, t)
    ref = torch.tensor(draw(st.lists(st.floats(-5, -0.01), min_size=n * t, max_size=n * t))).view(n, t)
    lengths = torch.tensor([draw(st.integers(1, t)) for _ in range(n)])
    pad = torch.arange(t).unsqueeze(0) >= lengths.unsqueeze(1)
    return lp.masked_fill(pad, INVALID_LOGPROB), ref.masked_fill(pad, INVALID_LOGPROB), lengths, kk


@SETTINGS
@given(rollouts(), st.floats(0.0, 1.0))
def test_legacy_non_score_reward_is_minus_kl_coef_times_objective_kl(data, kl_coef):
    lp, ref, _, _ = data
    kl = snippet("rloo/objective/kl")(lp, ref)
    nsr = snippet("rloo/objective/non_score_reward")(lp, ref, kl_coef=kl_coef)
    assert math.isclose(nsr, -kl_coef * kl, rel_tol=1e-5, abs_tol=1e-5)
    assert snippet("rloo/objective/kl")(lp, lp) == 0.0  # the reference itself: no penalty


@SETTINGS
@given(rollouts())
def test_legacy_objective_entropy_loses_exactly_one_per_padding_position(data):
    lp, _, lengths, _ = data
    t = lp.shape[1]
    real = np.where(np.arange(t)[None, :] < lengths.numpy()[:, None], -lp.numpy(), 0.0).sum(1)  # numpy oracle
    padding = (t - lengths.numpy()).astype(np.float64)
    got = snippet("rloo/objective/entropy")(lp)
    assert math.isclose(got, float((real - padding).mean()), rel_tol=1e-5, abs_tol=1e-4)


@SETTINGS
@given(rollouts(), st.lists(st.floats(-3, 3), min_size=12, max_size=12), st.floats(0.0, 0.5))
def test_legacy_rlhf_reward_is_scores_plus_non_score_reward(data, raw, kl_coef):
    lp, ref, _, _ = data
    s = torch.tensor(raw[: lp.shape[0]])
    got = snippet("rloo/objective/rlhf_reward")(s, lp, ref, kl_coef=kl_coef)
    nsr = snippet("rloo/objective/non_score_reward")(lp, ref, kl_coef=kl_coef)
    assert math.isclose(got, float(s.mean()) + nsr, rel_tol=1e-5, abs_tol=1e-5)


@pytest.mark.filterwarnings("ignore:var\\(\\). degrees of freedom:UserWarning")
@SETTINGS
@given(rollouts(), st.lists(st.floats(-3, 3), min_size=12, max_size=12), st.floats(0.05, 0.5))
def test_legacy_on_policy_whole_groups_give_zero_loss_and_no_clipping(data, raw, cliprange):
    """Before the first optimizer step the sequence ratio is 1: nothing clips, approxkl is 0, the token ratio mean is
    1, and a cell that holds every sample of its prompts has loss −mean(A) = 0."""
    lp, _, _, k = data
    adv = torch.tensor(raw[: lp.shape[0]]).view(k, -1)
    adv = (adv - (adv.sum(0) - adv) / (k - 1)).flatten()  # rows are k blocks of the same prompts, as TRL lays them
    assert snippet("rloo/policy/clipfrac_avg")([lp], [lp], [adv], cliprange=cliprange) == 0.0
    assert snippet("rloo/policy/approxkl_avg")([lp], [lp]) == 0.0
    assert snippet("rloo/val/ratio")([lp], [lp]) == 1.0
    assert abs(snippet("rloo/loss/policy_avg")([lp], [lp], [adv], cliprange=cliprange)) < 1e-5
    assert math.isnan(snippet("rloo/val/ratio_var")([lp], [lp]))  # one cell: unbiased variance of one value


@SETTINGS
@given(rollouts(), st.floats(-0.5, 0.5))
def test_legacy_padding_never_moves_the_sequence_ratio_keys(data, shift):
    """Moving every real token's new log-prob changes approxkl; padding positions (1.0 in both) never count."""
    lp, _, lengths, _ = data
    pad = torch.arange(lp.shape[1]).unsqueeze(0) >= lengths.unsqueeze(1)
    new = torch.where(pad, lp, lp + shift)
    expected = 0.5 * float(((shift * lengths.float()) ** 2).mean())
    assert math.isclose(snippet("rloo/policy/approxkl_avg")([new], [lp]), expected, rel_tol=1e-4, abs_tol=1e-5)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2))
def test_legacy_value_keys_are_zero_whatever_the_shape(epochs, minis, ga, procs):
    kw = dict(num_ppo_epochs=epochs, num_mini_batches=minis, gradient_accumulation_steps=ga, num_processes=procs)
    assert snippet("rloo/loss/value_avg")(**kw) == 0.0
    assert snippet("rloo/val/clipfrac_avg")(**kw) == 0.0


@SETTINGS
@given(st.lists(st.integers(0, 9), min_size=1, max_size=24), st.integers(0, 9))
def test_legacy_num_eos_tokens_counts_every_occurrence(tokens, eos):
    responses = torch.tensor(tokens, dtype=torch.int64).view(1, -1)
    assert snippet("rloo/val/num_eos_tokens")(responses, eos) == tokens.count(eos)
