"""Invariants of the documented formulas, checked with hypothesis on the snippets taken from the YAML files:
bounds, zero when policies agree, padding does not change masked means, independent numpy oracles, and the
difference between TRL's mean of micro-batch means and a token-weighted mean."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generator.check.snippets import as_floats, compile_function, materialize

from .conftest import real_sources

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


def metric(metric_id: str):
    """The metric of the sources; a property of a metric that was renamed or removed fails, never skips."""
    found = {it.model.id: it.model for it in real_sources().metrics}
    assert metric_id in found, f"{metric_id} is no longer documented: move its property tests to its new key"
    return found[metric_id]


def snippet(metric_id: str):
    s = metric(metric_id).snippet
    return compile_function(s.code, s.function, metric_id)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "item" in metafunc.fixturenames:
        items = list(real_sources().metrics)
        metafunc.parametrize("item", items, ids=[it.model.id for it in items])


_ROWS, _COLS = st.integers(1, 4), st.integers(1, 5)


@st.composite
def micro_batch(draw, rows=_ROWS, cols=_COLS):
    """(ratio [B,T], advantages [B], mask [B,T]) with at least one real token per row."""
    b, t = draw(rows), draw(cols)
    ratio = draw(st.lists(st.lists(st.floats(0.3, 1.7), min_size=t, max_size=t), min_size=b, max_size=b))
    adv = draw(st.lists(st.floats(-2, 2).filter(lambda a: abs(a) > 1e-3), min_size=b, max_size=b))
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = [[1.0 if j < n else 0.0 for j in range(t)] for n in lengths]
    return torch.tensor(ratio), torch.tensor(adv), torch.tensor(mask)


def _window(batches):
    ratio, adv, mask = zip(*batches, strict=True)
    return list(ratio), list(adv), list(mask)


def _pad(batches, value=5.0):
    """Append one padding column (mask 0, an extreme ratio) to every micro-batch."""
    out = []
    for ratio, adv, mask in batches:
        col = torch.full((ratio.shape[0], 1), value)
        out.append((torch.cat([ratio, col], 1), adv, torch.cat([mask, torch.zeros_like(col)], 1)))
    return out


CLIP_MEANS = ["grpo/clip_ratio/low_mean", "grpo/clip_ratio/high_mean", "grpo/clip_ratio/region_mean"]


@pytest.mark.parametrize("metric_id", CLIP_MEANS)
@SETTINGS
@given(batches=st.lists(micro_batch(), min_size=1, max_size=3))
def test_clip_fractions_are_fractions_and_ignore_padding(metric_id, batches):
    fn = snippet(metric_id)
    value = fn(*_window(batches))
    assert 0.0 <= value <= 1.0
    assert fn(*_window(_pad(batches, 0.01))) == pytest.approx(value, abs=1e-7)
    assert fn(*_window(_pad(batches, 9.0))) == pytest.approx(value, abs=1e-7)


@pytest.mark.parametrize("metric_id", CLIP_MEANS + ["grpo/clip_ratio/low_min", "grpo/clip_ratio/high_max"])
@SETTINGS
@given(batches=st.lists(micro_batch(), min_size=1, max_size=3))
def test_nothing_is_clipped_when_the_ratio_is_one(metric_id, batches):
    fn = snippet(metric_id)
    ones = [(torch.ones_like(r), a, m) for r, a, m in batches]
    assert fn(*_window(ones)) == 0.0


@SETTINGS
@given(batches=st.lists(micro_batch(), min_size=1, max_size=3))
def test_region_is_low_plus_high(batches):
    low, high, region = (snippet(i) for i in CLIP_MEANS)
    w = _window(batches)
    assert region(*w) == pytest.approx(low(*w) + high(*w), abs=1e-6)


@SETTINGS
@given(batch=micro_batch())
def test_per_completion_extremes_bracket_the_token_mean(batch):
    """Within one micro-batch the min over completions is <= the token-weighted mean <= the max over completions."""
    w = _window([batch])
    assert snippet("grpo/clip_ratio/low_min")(*w) <= snippet("grpo/clip_ratio/low_mean")(*w) + 1e-7
    assert snippet("grpo/clip_ratio/high_max")(*w) >= snippet("grpo/clip_ratio/high_mean")(*w) - 1e-7


def test_window_mean_is_not_token_weighted():
    """TRL averages per-micro-batch values; with unequal token counts that differs from pooling the tokens."""
    fn = snippet("grpo/clip_ratio/low_mean")
    big = (torch.full((1, 4), 0.5), torch.tensor([-1.0]), torch.ones(1, 4))  # 4 tokens, all clipped
    small = (torch.ones(1, 1), torch.tensor([-1.0]), torch.ones(1, 1))  # 1 token, not clipped
    assert fn(*_window([big, small])) == pytest.approx(0.5)  # (1 + 0) / 2, while pooled tokens give 4/5


@st.composite
def logps(draw):
    b, t = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    arr = st.lists(st.lists(st.floats(-6, -0.01), min_size=t, max_size=t), min_size=b, max_size=b)
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths])
    return torch.tensor(draw(arr)), torch.tensor(draw(arr)), torch.tensor(draw(arr)), mask


@SETTINGS
@given(data=st.lists(logps(), min_size=1, max_size=3), bias=st.booleans())
def test_kl_is_non_negative_and_zero_for_equal_policies(data, bias):
    fn = snippet("grpo/kl")
    logp, old, ref, mask = (list(x) for x in zip(*data, strict=True))
    assert fn(logp, old, ref, mask, use_bias_correction_kl=bias) >= -1e-7
    assert fn(logp, old, logp, mask, use_bias_correction_kl=bias) == pytest.approx(0.0, abs=1e-7)


@SETTINGS
@given(data=st.lists(logps(), min_size=1, max_size=2))
def test_kl_without_correction_matches_a_numpy_k3_oracle(data):
    fn = snippet("grpo/kl")
    logp, old, ref, mask = (list(x) for x in zip(*data, strict=True))
    per_mb = []
    for lp, rf, m in zip(logp, ref, mask, strict=True):
        d = rf.numpy().astype(np.float64) - lp.numpy()
        k3 = np.exp(d) - d - 1
        per_mb.append((k3 * m.numpy()).sum() / m.numpy().sum())
    assert fn(logp, old, ref, mask, use_bias_correction_kl=False) == pytest.approx(np.mean(per_mb), rel=1e-5, abs=1e-6)


@SETTINGS
@given(b=st.integers(1, 3), t=st.integers(1, 4), v=st.integers(2, 7), scale=st.floats(0.1, 5), seed=st.integers(0, 99))
def test_entropy_lies_between_zero_and_log_vocabulary(b, t, v, scale, seed):
    fn = snippet("grpo/entropy")
    logits = torch.randn(b, t, v, generator=torch.Generator().manual_seed(seed)) * scale
    mask = torch.ones(b, t)
    h = fn([logits], [mask])
    assert -1e-6 <= h <= math.log(v) + 1e-5
    assert fn([torch.zeros(b, t, v)], [mask]) == pytest.approx(math.log(v), rel=1e-6)


@st.composite
def rewards(draw):
    """rewards_per_func [N, F] with N a multiple of the group size, some NaN (a function returned None)."""
    g, groups, f = draw(st.integers(2, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cell = st.one_of(st.floats(-3, 3, allow_nan=False), st.just(float("nan")))
    vals = draw(st.lists(st.lists(cell, min_size=f, max_size=f), min_size=g * groups, max_size=g * groups))
    weights = draw(st.lists(st.floats(0.1, 2), min_size=f, max_size=f))
    return torch.tensor(vals), torch.tensor(weights), g


@SETTINGS
@given(data=rewards())
def test_per_function_mean_matches_numpy_nanmean(data):
    r, _, _ = data
    got = snippet("grpo/rewards/{name}/mean")([r])
    for f, value in enumerate(got if isinstance(got, list) else [got]):
        col = r[:, f].numpy()
        if np.isnan(col).all():
            assert value is None or math.isnan(value)
        else:
            assert value == pytest.approx(float(np.nanmean(col.astype(np.float64))), rel=1e-5, abs=1e-6)


@SETTINGS
@given(data=rewards())
def test_reward_std_matches_an_unbiased_std_of_weighted_sums(data):
    r, w, _ = data
    weighted = np.nansum(r.numpy().astype(np.float64) * w.numpy(), axis=1)
    weighted[np.isnan(r.numpy()).all(axis=1)] = np.nan  # rows no function scored are left out
    kept = weighted[~np.isnan(weighted)]
    assume(len(kept) >= 2)
    got = snippet("grpo/reward_std")([r] if _takes_lists("grpo/reward_std") else r, w)
    assert got == pytest.approx(float(np.std(kept, ddof=1)), rel=1e-4, abs=1e-5)
    assert got >= 0


def _takes_lists(metric_id: str) -> bool:
    return metric(metric_id).snippet.example.inputs["rewards_per_func"].list  # type: ignore[union-attr]


@SETTINGS
@given(data=rewards())
def test_frac_reward_zero_std_matches_trls_own_nanstd(data):
    """Oracle: TRL's own `nanstd` helper per group (float32 rounding included: equal weighted rewards whose mean
    is not exact can give a tiny non-zero std, and then the group does not count as zero-std)."""
    from trl.trainer.utils import nanstd

    r, w, g = data
    fn = snippet("grpo/frac_reward_zero_std")
    wrap = (lambda x: [x]) if _takes_lists("grpo/frac_reward_zero_std") else (lambda x: x)
    for scores in (torch.nan_to_num(r), torch.ones_like(r)):
        weighted = (scores * w.unsqueeze(0)).nansum(dim=1)
        std = nanstd(weighted.view(-1, g), dim=1)
        expected = torch.isclose(std, torch.zeros_like(std)).float().mean().item()
        value = fn(wrap(scores), w, g)
        assert 0.0 <= value <= 1.0
        assert value == pytest.approx(expected)
    assert fn(wrap(torch.ones_like(r)), torch.ones_like(w), g) == 1.0


@SETTINGS
@given(lengths=st.lists(st.lists(st.integers(1, 30), min_size=1, max_size=6), min_size=1, max_size=3))
def test_completion_length_statistics_are_ordered(lengths):
    tensors = [torch.tensor(x) for x in lengths]
    lo = snippet("grpo/completions/min_length")(tensors)
    hi = snippet("grpo/completions/max_length")(tensors)
    masks = [torch.tensor([[1] * n + [0] * (30 - n) for n in x]) for x in lengths]
    mean = snippet("grpo/completions/mean_length")(masks)
    assert lo <= mean + 1e-6 and mean <= hi + 1e-6
    assert mean == pytest.approx(np.mean([np.mean(x) for x in lengths]), rel=1e-6)


def _perturb(value, draw_unit):
    """A tensor of the same shape and domain as ``value``: 0/1 masks, ints and bools are kept; other floats are
    redrawn within the example's own [min, max] (log-probs stay negative, ratios positive, NaN stays NaN)."""
    if value.dtype in (torch.bool, torch.int64):
        return value
    finite = value[~torch.isnan(value)]
    if finite.numel() == 0 or bool(((finite == 0) | (finite == 1)).all()):
        return value
    lo, hi = float(finite.min()), float(finite.max())
    noise = torch.tensor([draw_unit() for _ in range(value.numel())], dtype=value.dtype).view_as(value)
    return torch.where(torch.isnan(value), value, lo + (hi - lo) * noise)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=st.data())
def test_values_stay_within_the_documented_bounds(item, data):
    """Every metric: inputs shaped like its worked example give values inside the page's `healthy.bounds`."""
    m = item.model
    fn = compile_function(m.snippet.code, m.snippet.function, item.path)
    unit = lambda: data.draw(st.floats(0, 1))  # noqa: E731
    kwargs = {k: ([_perturb(t, unit) for t in v] if isinstance(v, list) and v and isinstance(v[0], torch.Tensor)
                  else _perturb(v, unit) if isinstance(v, torch.Tensor) else v)
              for k, v in materialize(m.snippet.example).items()}
    got = as_floats(fn(**kwargs))
    lo, hi = m.healthy.bounds.min, m.healthy.bounds.max
    for value in got if isinstance(got, list) else [got]:
        if value is None or math.isnan(value):
            continue
        assert lo is None or value >= lo - 1e-6, f"{item.path}: {value} below the documented bound {lo}"
        assert hi is None or value <= hi + 1e-6, f"{item.path}: {value} above the documented bound {hi}"
