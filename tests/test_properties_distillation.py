"""Invariants of the distillation formulas, checked with hypothesis on the snippets taken from the YAML files: the
three divergences are non-negative, zero when student and teacher agree and equal to numpy oracles; the generalized
JSD is bounded by the binary entropy of beta and shrinks to beta times the forward KL (or 1 - beta times the reverse
KL) near the ends; padding changes nothing; the logged loss is a token-weighted mean over the generation batch; the
two-bucket loss of TRL 1.1-1.8 never exceeds the full divergence (data processing); and the generation-side and
optimizer-side keys keep their orderings and ranges."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
BETAS = [0.0, 0.25, 0.5, 0.9, 1.0]


_VOCAB, _VOCAB_3 = st.integers(2, 6), st.integers(3, 6)


@st.composite
def logits(draw, v=_VOCAB, scale=3.0):
    """(student [B,T,V], teacher [B,T,V], mask [B,T]) with at least one counted token per row."""
    b, t, n_vocab = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(v)
    seed = draw(st.integers(0, 10_000))
    g = torch.Generator().manual_seed(seed)
    student = (torch.rand(b, t, n_vocab, generator=g) * 2 - 1) * scale
    teacher = (torch.rand(b, t, n_vocab, generator=g) * 2 - 1) * scale
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths])
    return student, teacher, mask


def _one_step(student, teacher, mask, **kw):
    """`loss` of a single micro-batch whose generation batch is itself: the token mean of the divergence."""
    return snippet("distillation/loss")([student], [teacher], [mask], [mask.sum()], 1, **kw)


def _np_kl(p, q):
    return float(np.sum(p * (np.log(p) - np.log(q))))


def _np_divergence(zs, zt, beta, temperature):
    """Per-token divergence in float64 numpy, written independently of the snippets."""
    ps = np.exp(zs / temperature - np.logaddexp.reduce(zs / temperature))
    pt = np.exp(zt / temperature - np.logaddexp.reduce(zt / temperature))
    if beta == 0.0:
        return _np_kl(pt, ps)
    if beta == 1.0:
        return _np_kl(ps, pt)
    m = (1 - beta) * ps + beta * pt
    return beta * _np_kl(pt, m) + (1 - beta) * _np_kl(ps, m)


@pytest.mark.parametrize("beta", BETAS)
@SETTINGS
@given(data=logits(), temperature=st.sampled_from([0.7, 1.0, 1.5]))
def test_loss_matches_a_numpy_oracle_and_is_non_negative(beta, data, temperature):
    student, teacher, mask = data
    value = _one_step(student, teacher, mask, beta=beta, temperature=temperature)
    per_token = [_np_divergence(student[i, j].double().numpy(), teacher[i, j].double().numpy(), beta, temperature)
                 for i in range(mask.shape[0]) for j in range(mask.shape[1]) if mask[i, j] > 0]
    assert value >= -1e-6
    assert value == pytest.approx(float(np.mean(per_token)), rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("beta", BETAS)
@SETTINGS
@given(data=logits())
def test_loss_is_zero_when_the_student_is_the_teacher(beta, data):
    student, _, mask = data
    assert _one_step(student, student.clone(), mask, beta=beta) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("beta", [0.1, 0.25, 0.5, 0.75, 0.9])
@SETTINGS
@given(data=logits(scale=8.0))
def test_generalized_jsd_is_bounded_by_the_binary_entropy_of_beta(beta, data):
    student, teacher, mask = data
    bound = -beta * math.log(beta) - (1 - beta) * math.log(1 - beta)
    assert _one_step(student, teacher, mask, beta=beta) <= bound + 1e-6


@SETTINGS
@given(data=logits(scale=1.5))
def test_generalized_jsd_shrinks_to_beta_times_a_kl_near_the_ends(data):
    """Not an interpolation of the two KLs: near beta = 0 it is about beta x forward KL, near 1 (1 - beta) x reverse."""
    student, teacher, mask = data
    forward = _one_step(student, teacher, mask, beta=0.0)
    reverse = _one_step(student, teacher, mask, beta=1.0)
    assume(forward > 1e-3 and reverse > 1e-3)
    eps = 1e-3
    assert _one_step(student, teacher, mask, beta=eps) / eps == pytest.approx(forward, rel=0.05)
    assert _one_step(student, teacher, mask, beta=1 - eps) / eps == pytest.approx(reverse, rel=0.05)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
@SETTINGS
@given(data=logits())
def test_padding_changes_neither_loss_nor_entropy(beta, data):
    student, teacher, mask = data
    extreme = torch.full((mask.shape[0], 1, student.shape[-1]), -9.0)
    extreme[..., 0] = 9.0
    padded = [torch.cat([student, extreme], 1), torch.cat([teacher, -extreme], 1),
              torch.cat([mask, torch.zeros(mask.shape[0], 1)], 1)]
    loss = snippet("distillation/loss")
    assert loss(*[[x] for x in padded], [mask.sum()], 1, beta=beta) == pytest.approx(
        _one_step(student, teacher, mask, beta=beta), abs=1e-6)
    entropy = snippet("distillation/entropy")
    assert entropy([padded[0]], [padded[2]]) == pytest.approx(entropy([student], [mask]), abs=1e-6)


@st.composite
def two_micro_batches(draw):
    """Two `logits` draws over one vocabulary (as a step's micro-batches are): drawn so, not filtered to it."""
    vocab = st.just(draw(_VOCAB))
    return draw(logits(v=vocab)), draw(logits(v=vocab))


@SETTINGS
@given(pair=two_micro_batches())
def test_loss_is_token_weighted_over_the_generation_batch(pair):
    """Two micro-batches of one step, each divided by the step's token count: the pooled token mean, which differs
    from the mean of the two micro-batch means when they hold different numbers of tokens."""
    a, b = pair
    n = a[2].sum() + b[2].sum()
    value = snippet("distillation/loss")([a[0], b[0]], [a[1], b[1]], [a[2], b[2]], [n, n], 2)
    total = _one_step(*a) * float(a[2].sum()) + _one_step(*b) * float(b[2].sum())
    assert value == pytest.approx(total / float(n), rel=1e-5, abs=1e-6)


def test_mean_of_micro_batch_means_is_not_what_is_logged():
    z = torch.log(torch.tensor([[[3.0, 1.0]], [[3.0, 1.0]]])).transpose(0, 1)  # p_S = (0.75, 0.25) on 2 tokens
    flat = torch.zeros(1, 2, 2)
    same = torch.zeros(1, 1, 2)
    one, two = torch.ones(1, 2), torch.ones(1, 1)
    n = torch.tensor(3.0)
    logged = snippet("distillation/loss")([z, same], [flat, same], [one, two], [n, n], 2)
    assert logged == pytest.approx(2 * 0.1308120 / 3, abs=1e-5)
    assert logged != pytest.approx((0.1308120 + 0.0) / 2, abs=1e-3)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
@SETTINGS
@given(data=logits(v=_VOCAB_3), seed=st.integers(0, 99))
def test_two_bucket_loss_of_the_experimental_trainer_never_exceeds_the_full_divergence(beta, data, seed):
    """TRL 1.1-1.8 lumped the vocabulary into the chosen tokens and a tail: a coarser partition, so by the data
    processing inequality its divergence is at most the full one."""
    student, teacher, mask = data
    ids = torch.randint(0, student.shape[-1], mask.shape, generator=torch.Generator().manual_seed(seed))
    old = snippet("distillation/loss", since="1.1.0")(student, teacher, ids, mask, beta=beta)
    assert -1e-6 <= old <= _one_step(student, teacher, mask, beta=beta) + 1e-5


@SETTINGS
@given(data=logits(scale=6.0), temperature=st.sampled_from([0.5, 1.0, 2.0]))
def test_entropy_lies_between_zero_and_log_vocabulary_and_grows_with_temperature(data, temperature):
    student, _, mask = data
    fn = snippet("distillation/entropy")
    value = fn([student], [mask], temperature=temperature)
    assert -1e-6 <= value <= math.log(student.shape[-1]) + 1e-6
    assert fn([student], [mask], temperature=4 * temperature) >= value - 1e-6


def test_entropy_of_an_empty_micro_batch_is_zero_not_nan():
    assert snippet("distillation/entropy")([torch.zeros(1, 2, 3)], [torch.zeros(1, 2)]) == 0.0


@st.composite
def generation_batches(draw):
    """(lengths, last tokens) per generation batch, EOS id 1, pad 0, other tokens 2..5."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        out.append((torch.tensor(draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))),
                    torch.tensor(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))))
    return out


@SETTINGS
@given(batches=generation_batches())
def test_completion_statistics_keep_their_order_and_ranges(batches):
    lengths = [b[0] for b in batches]
    last = [b[1] for b in batches]
    eos = torch.tensor([1])
    lo, mean, hi = (snippet(f"distillation/completions/{k}")(lengths) for k in ("min_length", "mean_length",
                                                                                   "max_length"))
    assert lo <= mean + 1e-9 <= hi + 2e-9
    ratio = snippet("distillation/completions/clipped_ratio")(last, eos, 0)
    assert 0.0 <= ratio <= 1.0
    t_lo, t_mean, t_hi = (snippet(f"distillation/completions/{k}_terminated_length")(lengths, last, eos, 0)
                          for k in ("min", "mean", "max"))
    assert 0.0 <= t_lo <= t_mean + 1e-9 <= t_hi + 2e-9 <= hi + 3e-9
    if ratio == 0.0:  # nothing was cut: the terminated statistics are the plain ones
        assert (t_lo, t_mean, t_hi) == pytest.approx((lo, mean, hi))
    if ratio == 1.0:  # nothing ended: every batch contributes TRL's lone zero
        assert (t_lo, t_mean, t_hi) == (0.0, 0.0, 0.0)


@SETTINGS
@given(batches=generation_batches(), start=st.integers(0, 1000))
def test_num_tokens_adds_every_prompt_and_completion_token_once(batches, start):
    prompts = [torch.full_like(b[0], 3) for b in batches]
    completions = [b[0] for b in batches]
    value = snippet("distillation/num_tokens")(prompts, completions, start)
    assert value == start + sum(int(p.sum() + c.sum()) for p, c in zip(prompts, completions, strict=True))


@SETTINGS
@given(prompts=st.integers(1, 40), b=st.integers(1, 4), ga=st.integers(1, 4), steps=st.integers(1, 12))
def test_epoch_advances_by_one_generation_batch_per_step(prompts, b, ga, steps):
    assume(prompts >= b * ga)
    per_epoch = prompts // (b * ga)
    logged = snippet("distillation/epoch")(torch.arange(1, steps + 1), prompts, b, ga)
    assert logged == pytest.approx([s / per_epoch for s in range(1, steps + 1)])


@SETTINGS
@given(max_steps=st.integers(2, 50), warmup=st.integers(0, 5), lr=st.floats(1e-7, 1e-3))
def test_learning_rate_stays_within_zero_and_the_peak_and_decays_after_warmup(max_steps, warmup, lr):
    assume(warmup < max_steps)
    logged = snippet("distillation/learning_rate")(torch.arange(1, max_steps + 1), max_steps, lr, warmup)
    assert all(-1e-15 <= x <= lr * (1 + 1e-9) for x in logged)
    after = logged[warmup:]
    assert all(a >= b for a, b in zip(after, after[1:], strict=False))


@SETTINGS
@given(seed=st.integers(0, 99), max_grad_norm=st.floats(0.1, 5.0))
def test_grad_norm_is_the_global_norm_and_the_update_is_clipped_to_the_threshold(seed, max_grad_norm):
    g = torch.Generator().manual_seed(seed)
    grads = [torch.randn(3, 2, generator=g), torch.randn(4, generator=g)]
    expected = torch.cat([x.flatten() for x in grads]).norm().item()
    assert snippet("distillation/grad_norm")(grads, max_grad_norm) == pytest.approx(expected, rel=1e-5)
    assert torch.cat([x.flatten() for x in grads]).norm().item() <= max_grad_norm * (1 + 1e-5)


@SETTINGS
@given(calls=st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5), min_size=1, max_size=3),
       seed=st.integers(0, 99))
def test_tool_frequencies_are_counts_per_completion_and_shares_of_calls(calls, seed):
    rng = np.random.default_rng(seed)
    c = [torch.tensor(x) for x in calls]
    f = [torch.tensor([int(rng.integers(0, k + 1)) for k in x]) for x in calls]
    assert snippet("distillation/tools/call_frequency")(c) >= 0.0
    assert 0.0 <= snippet("distillation/tools/failure_frequency")(c, f) <= 1.0
