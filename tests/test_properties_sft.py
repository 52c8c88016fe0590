"""Invariants of the SFT pages' formulas, checked with hypothesis on the snippets taken from the YAML files: bounds,
padding and ignored labels change nothing, independent numpy oracles, a step's micro-batches add up to its token
mean however its rows are split, and the differences between TRL's reductions and the obvious ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from .documented import snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


VOCAB = 5


@st.composite
def micro_batch(draw, vocab: int = VOCAB):
    """(logits [B, L, V], labels [B, L], attention_mask [B, L]): right padding, a masked prompt, at least one label."""
    b, length = draw(st.integers(1, 3)), draw(st.integers(2, 6))
    logits = torch.tensor(draw(st.lists(st.floats(-4, 4), min_size=b * length * vocab, max_size=b * length * vocab)))
    ids = torch.tensor(draw(st.lists(st.integers(0, vocab - 1), min_size=b * length, max_size=b * length)))
    ids = ids.view(b, length)
    real = [draw(st.integers(2, length)) for _ in range(b)]
    prompt = [draw(st.integers(1, n - 1)) for n in real]
    attention = torch.tensor([[1 if t < n else 0 for t in range(length)] for n in real])
    labels = ids.clone()
    for i, (n, p) in enumerate(zip(real, prompt, strict=True)):
        labels[i, :p] = -100
        labels[i, n:] = -100
    return logits.view(b, length, vocab), labels, attention


windows = st.lists(micro_batch(), min_size=1, max_size=3)


def _pad(batches, value: float = 7.0):
    """One more padding position per row: attention 0, label -100, extreme logits."""
    out = []
    for z, y, a in batches:
        b = z.shape[0]
        out.append((torch.cat([z, torch.full((b, 1, z.shape[2]), value)], 1),
                    torch.cat([y, torch.full((b, 1), -100)], 1),
                    torch.cat([a, torch.zeros(b, 1, dtype=a.dtype)], 1)))
    return out


def _lists(batches):
    z, y, a = zip(*batches, strict=True)
    return list(z), list(y), list(a)


def _numpy_per_position(z: torch.Tensor, y: torch.Tensor):
    """Per labelled position (shifted): (argmax == label, entropy, -log p(label)), with numpy."""
    zn, yn = z.double().numpy()[:, :-1], y.numpy()[:, 1:]
    out = []
    for i in range(zn.shape[0]):
        for t in range(zn.shape[1]):
            if yn[i, t] == -100:
                continue
            logits = zn[i, t]
            logp = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
            hit = int(np.argmax(logits)) == yn[i, t]
            out.append((hit, float(-(np.exp(logp) * logp).sum()), float(-logp[yn[i, t]])))
    return out


# --------------------------------------------------------------------------------------------------------------------
# mean_token_accuracy and entropy
# --------------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(batches=windows)
def test_accuracy_is_a_fraction_that_ignores_padding_and_matches_numpy(batches):
    fn = snippet("sft/mean_token_accuracy")
    z, y, _ = _lists(batches)
    value = fn(z, y)
    assert 0.0 <= value <= 1.0
    z2, y2, _ = _lists(_pad(batches))
    assert fn(z2, y2) == pytest.approx(value, abs=1e-7)
    per_batch = [np.mean([hit for hit, _, _ in _numpy_per_position(zb, yb)]) for zb, yb in zip(z, y, strict=True)]
    assert value == pytest.approx(float(np.mean(per_batch)), abs=1e-6)


@SETTINGS
@given(batches=windows)
def test_accuracy_is_one_when_every_label_is_the_argmax(batches):
    fn = snippet("sft/mean_token_accuracy")
    z, y, _ = _lists(batches)
    peaked = []
    for zb, yb in zip(z, y, strict=True):
        target = yb[:, 1:].clamp(min=0)
        bump = torch.zeros_like(zb)
        bump[:, :-1] = torch.nn.functional.one_hot(target, zb.shape[-1]) * 100.0
        peaked.append(zb + bump)
    assert fn(peaked, y) == 1.0


@SETTINGS
@given(batches=windows, shift=st.floats(-50, 50))
def test_entropy_is_bounded_ignores_padding_and_is_shift_invariant(batches, shift):
    fn = snippet("sft/entropy")
    z, y, _ = _lists(batches)
    value = fn(z, y)
    assert -1e-6 <= value <= math.log(VOCAB) + 1e-6
    z2, y2, _ = _lists(_pad(batches))
    assert fn(z2, y2) == pytest.approx(value, abs=1e-6)
    assert fn([zb + shift for zb in z], y) == pytest.approx(value, abs=1e-4)
    per_batch = [np.mean([h for _, h, _ in _numpy_per_position(zb, yb)]) for zb, yb in zip(z, y, strict=True)]
    assert value == pytest.approx(float(np.mean(per_batch)), abs=1e-5)


@SETTINGS
@given(batches=windows)
def test_entropy_of_uniform_logits_is_log_vocab(batches):
    z, y, a = _lists(batches)
    flat = [torch.zeros_like(zb) for zb in z]
    assert snippet("sft/entropy")(flat, y) == pytest.approx(math.log(VOCAB), abs=1e-6)
    assert snippet("sft/entropy", "0.22.0")(flat, a) == pytest.approx(math.log(VOCAB), abs=1e-6)


@SETTINGS
@given(batches=windows)
def test_old_entropy_weights_the_attention_mask_and_ignores_labels(batches):
    """0.22 to 1.2: padding (attention 0) changes nothing, the labels play no part; the two rules differ once
    prompt positions and last positions count."""
    old = snippet("sft/entropy", "0.22.0")
    z, y, a = _lists(batches)
    value = old(z, a)
    z2, _, a2 = _lists(_pad(batches))
    assert old(z2, a2) == pytest.approx(value, abs=1e-6)
    assert -1e-6 <= value <= math.log(VOCAB) + 1e-6


def test_old_and_new_entropy_differ_on_a_masked_prompt():
    # the prompt position is sure of itself (entropy ~0), the answer position is uniform (ln 5)
    z = torch.zeros(1, 3, VOCAB)
    z[0, 0, 0] = 100.0
    y = torch.tensor([[-100, -100, 2]])
    a = torch.ones(1, 3, dtype=torch.long)
    new = snippet("sft/entropy")([z], [y])
    old = snippet("sft/entropy", "0.22.0")([z], [a])
    assert new == pytest.approx(math.log(VOCAB), abs=1e-6)
    assert old == pytest.approx(2 * math.log(VOCAB) / 3, abs=1e-6)


# --------------------------------------------------------------------------------------------------------------------
# loss
# --------------------------------------------------------------------------------------------------------------------


def _step_count(batches) -> int:
    return sum(int((yb[:, 1:] != -100).sum()) for _, yb, _ in batches)


@SETTINGS
@given(batches=windows)
def test_loss_of_one_step_is_its_token_mean_however_the_rows_are_split(batches):
    fn = snippet("sft/loss")
    z, y, _ = _lists(batches)
    n = _step_count(batches)
    value = fn(z, y, [n] * len(z), 1)
    oracle = [nll for zb, yb in zip(z, y, strict=True) for _, _, nll in _numpy_per_position(zb, yb)]
    assert value == pytest.approx(float(np.mean(oracle)), abs=1e-5)
    assert value >= 0.0
    # the same rows as one micro-batch per row: still the step's token mean
    rows = [(zb[i : i + 1], yb[i : i + 1]) for zb, yb in zip(z, y, strict=True) for i in range(zb.shape[0])]
    zr, yr = [r[0] for r in rows], [r[1] for r in rows]
    assert fn(zr, yr, [n] * len(rows), 1) == pytest.approx(value, abs=1e-5)
    # padding changes nothing
    z2, y2, _ = _lists(_pad(batches))
    assert fn(z2, y2, [n] * len(z2), 1) == pytest.approx(value, abs=1e-6)


@SETTINGS
@given(batches=windows)
def test_dft_loss_never_exceeds_nll(batches):
    fn = snippet("sft/loss")
    z, y, _ = _lists(batches)
    n = [_step_count(batches)] * len(z)
    assert 0.0 <= fn(z, y, n, 1, loss_type="dft") <= fn(z, y, n, 1) + 1e-7


def test_loss_window_is_a_mean_of_step_means_not_a_token_mean():
    """Two one-micro-batch steps of 1 and 3 labelled tokens: the window mean weighs the steps equally."""
    fn = snippet("sft/loss")
    z1, y1 = torch.tensor([[[0.0, 0.0, -100.0], [0.0, 0.0, 0.0]]]), torch.tensor([[-100, 0]])  # ln 2
    z2, y2 = torch.zeros(1, 4, 3), torch.tensor([[-100, 1, 2, 0]])  # 3 × ln 3
    logged = fn([z1, z2], [y1, y2], [1, 3], 2)
    assert logged == pytest.approx((math.log(2) + math.log(3)) / 2, abs=1e-6)
    assert logged != pytest.approx((math.log(2) + 3 * math.log(3)) / 4, abs=1e-3)


# --------------------------------------------------------------------------------------------------------------------
# num_tokens, grad_norm, learning_rate, epoch, aux_loss
# --------------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(batches=windows)
def test_num_tokens_counts_real_tokens_and_only_grows(batches):
    fn = snippet("sft/num_tokens")
    masks = [a for _, _, a in batches]
    totals = [fn(masks[: k + 1]) for k in range(len(masks))]
    assert totals == sorted(totals)
    assert totals[-1] == float(sum(int(a.sum()) for a in masks))
    assert fn([a for _, _, a in _pad(batches)]) == totals[-1]


@SETTINGS
@given(grads=st.lists(st.lists(st.floats(-10, 10), min_size=1, max_size=4), min_size=1, max_size=4),
       max_norm=st.floats(0.1, 5.0))
def test_grad_norm_is_the_norm_of_all_gradients_and_clipping_caps_it(grads, max_norm):
    fn = snippet("sft/grad_norm")
    tensors = [torch.tensor(g) for g in grads]
    expected = float(np.linalg.norm(np.concatenate([np.array(g) for g in grads])))
    copies = [t.clone() for t in tensors]
    assert fn(copies, max_norm) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    after = float(torch.linalg.vector_norm(torch.cat([c.flatten() for c in copies])))
    assert after <= max_norm + 1e-4


@SETTINGS
@given(total=st.integers(2, 40), warmup=st.integers(0, 5), lr=st.floats(1e-6, 1e-3))
def test_learning_rate_stays_in_range_and_the_old_trainer_reads_one_step_ahead(total, warmup, lr):
    warmup = min(warmup, total - 1)
    steps = torch.arange(1, total + 1)
    new = snippet("sft/learning_rate")(steps, total, lr, warmup)
    old = snippet("sft/learning_rate", "0.7.10")(steps, total, lr, warmup)
    assert all(0.0 <= v <= lr * (1 + 1e-9) for v in new + old)
    after_warmup = new[warmup:]
    assert all(a >= b for a, b in zip(after_warmup, after_warmup[1:], strict=False))
    assert new[1:] == pytest.approx(old[:-1], abs=1e-15)  # the old log at step s shows step s + 1's rate
    assert old[-1] == 0.0 and new[-1] > 0.0


@SETTINGS
@given(rows=st.integers(1, 40), batch=st.integers(1, 4), accumulation=st.integers(1, 4), steps=st.integers(1, 12))
def test_epoch_rises_and_ends_each_pass_on_an_integer(rows, batch, accumulation, steps):
    fn = snippet("sft/epoch")
    values = fn(torch.arange(1, steps + 1), rows, batch, accumulation)
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    per_epoch = math.ceil(math.ceil(rows / batch) / accumulation)
    for s, v in enumerate(values, start=1):
        if s % per_epoch == 0:
            assert v == pytest.approx(s // per_epoch)


@SETTINGS
@given(experts=st.integers(2, 6), tokens=st.integers(1, 8), data=st.data())
def test_aux_loss_lies_between_zero_and_the_number_of_experts(experts, tokens, data):
    fn = snippet("sft/aux_loss")
    top_k = data.draw(st.integers(1, experts))
    r = torch.tensor(data.draw(st.lists(st.floats(-3, 3), min_size=tokens * experts, max_size=tokens * experts)))
    value = fn([r.view(tokens, experts)], top_k)
    assert 0.0 < value <= experts + 1e-5


def test_aux_loss_of_even_routing_is_top_k():
    # four tokens, each sure of a different expert (top-1): f = P = 1/4 per expert
    r = torch.eye(4) * 50.0
    assert snippet("sft/aux_loss")([r], 1) == pytest.approx(1.0, abs=1e-6)
