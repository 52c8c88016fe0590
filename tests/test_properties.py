"""Invariants of the documented formulas, checked with hypothesis on the snippets taken from the YAML files:
bounds, zero when policies agree, padding does not change masked means, independent numpy oracles, and the
difference between TRL's mean of micro-batch means and a token-weighted mean."""

from __future__ import annotations

import inspect
import math
from functools import cache

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generator.check.snippets import as_floats, compile_function, materialize

from .conftest import real_sources
from .documented import compiled, metric, snippet

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)


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
    fn = compiled(m.snippet.code, m.snippet.function, item.path)
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


# --------------------------------------------------------------------------------------------------------------------
# Legacy PPO (ppo_legacy): one tensor per mini-batch update; every `ppo/*` key is a mean over updates
# --------------------------------------------------------------------------------------------------------------------


@st.composite
def ppo_updates(draw, max_updates=3):
    """Mini-batch updates as legacy `PPOTrainer.loss` sees them: lists of [b, T] tensors (rollout and current
    log-probs, whitened advantages, rollout values, current values, returns, response mask), each update with at
    least two response tokens (the unbiased variances need them)."""
    n = draw(st.integers(1, max_updates))
    b, t = draw(st.integers(1, 3)), draw(st.integers(2, 5))

    def block(lo, hi):
        return torch.tensor(draw(st.lists(st.lists(st.floats(lo, hi), min_size=t, max_size=t), min_size=b,
                                          max_size=b)))

    out = {k: [] for k in ("old_logprobs", "logprobs", "advantages", "values", "vpreds", "returns", "mask")}
    for _ in range(n):
        old = block(-4, -0.05)
        out["old_logprobs"].append(old)
        out["logprobs"].append(old + block(-0.6, 0.6))
        out["advantages"].append(block(-2, 2))
        out["values"].append(block(-1, 1))
        out["vpreds"].append(block(-1, 1))
        out["returns"].append(block(-2, 2))
        starts = draw(st.lists(st.integers(0, t - 1), min_size=b, max_size=b))
        mask = torch.tensor([[1.0 if j >= s else 0.0 for j in range(t)] for s in starts])
        if mask.sum() < 2:  # at least two response tokens per update
            mask[0, -2:] = 1.0
        out["mask"].append(mask)
    return out


def _call(metric_id: str, inputs: dict, **settings_):
    """The page's snippet fed with the inputs its signature names."""
    fn = snippet(metric_id)
    names = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in {**inputs, **settings_}.items() if k in names})


@SETTINGS
@given(u=ppo_updates())
def test_ppo_legacy_var_explained_is_at_most_one_and_matches_error_and_variance(u):
    """var_explained = 1 - val/error / returns/var of the same updates, hence at most 1."""
    assume(all(float(((r - (r * m).sum() / m.sum()) ** 2 * m).sum()) > 1e-6 for r, m in zip(u["returns"], u["mask"],
                                                                                        strict=True)))
    ve = _call("ppo_legacy/ppo/val/var_explained", u)
    error, var = _call("ppo_legacy/ppo/val/error", u), _call("ppo_legacy/ppo/returns/var", u)
    assert ve <= 1.0 + 1e-6
    assert ve == pytest.approx(1 - error / var, rel=1e-4, abs=1e-5)


@SETTINGS
@given(u=ppo_updates(), offset=st.floats(1.0, 4.0), sign=st.sampled_from([-1.0, 1.0]))
def test_ppo_legacy_var_explained_is_negative_for_a_critic_worse_than_a_constant(u, offset, sign):
    """Predicting each update's mean return shifted by at least one standard deviation is worse than predicting the
    mean itself: the logged value is below 0."""
    preds = []
    for r, m in zip(u["returns"], u["mask"], strict=True):
        n = m.sum()
        mean = (r * m).sum() / n
        std = torch.sqrt(((r - mean) ** 2 * m).sum() / (n - 1))
        assume(float(std) > 1e-3)
        preds.append(torch.full_like(r, float(mean + sign * offset * std)))
    assert _call("ppo_legacy/ppo/val/var_explained", {**u, "vpreds": preds}) < 0


@SETTINGS
@given(u=ppo_updates())
def test_ppo_legacy_approxkl_is_non_negative_and_zero_for_an_unchanged_policy(u):
    assert _call("ppo_legacy/ppo/policy/approxkl", u) >= 0.0
    same = {**u, "logprobs": [x.clone() for x in u["old_logprobs"]]}
    assert _call("ppo_legacy/ppo/policy/approxkl", same) == 0.0
    assert _call("ppo_legacy/ppo/policy/policykl", same) == 0.0


@SETTINGS
@given(u=ppo_updates(), lift=st.floats(0.01, 1.0))
def test_ppo_legacy_policykl_is_negative_when_the_sampled_tokens_became_likelier(u, lift):
    """k1 has a sign: updates that raised the probability of every sampled token give policykl < 0 (approxkl > 0)."""
    raised = {**u, "logprobs": [x + lift for x in u["old_logprobs"]]}
    assert _call("ppo_legacy/ppo/policy/policykl", raised) == pytest.approx(-lift, abs=1e-5)
    assert _call("ppo_legacy/ppo/policy/approxkl", raised) == pytest.approx(lift**2 / 2, abs=1e-5)


@SETTINGS
@given(u=ppo_updates(), eps=st.floats(0.05, 0.4))
def test_ppo_legacy_clipfrac_is_at_most_the_share_of_out_of_range_ratios(u, eps):
    clipfrac = _call("ppo_legacy/ppo/policy/clipfrac", u, cliprange=eps)
    outside = []
    for old, new, m in zip(u["old_logprobs"], u["logprobs"], u["mask"], strict=True):
        ratio = torch.exp(new - old)
        out_of_range = ((ratio < 1 - eps) | (ratio > 1 + eps)).float()
        outside.append((out_of_range * m).sum() / m.sum())
    assert 0.0 <= clipfrac <= float(torch.stack(outside).mean()) + 1e-6


@SETTINGS
@given(u=ppo_updates(), vf_coef=st.floats(0.0, 2.0), threshold=st.sampled_from([1.05, 10.0]))
def test_ppo_legacy_total_loss_is_policy_plus_vf_coef_times_value(u, vf_coef, threshold):
    """loss/total == loss/policy + vf_coef * loss/value, also when mini-batches are skipped by ratio_threshold."""
    opts = dict(cliprange=0.2, cliprange_value=0.2, ratio_threshold=threshold)
    total = _call("ppo_legacy/ppo/loss/total", u, vf_coef=vf_coef, **opts)
    policy = _call("ppo_legacy/ppo/loss/policy", u, **opts)
    value = _call("ppo_legacy/ppo/loss/value", u, **opts)
    assert value >= 0.0
    assert total == pytest.approx(policy + vf_coef * value, abs=1e-5)


@SETTINGS
@given(u=ppo_updates(max_updates=1))
def test_ppo_legacy_value_loss_is_half_the_error_without_clipping(u):
    """With a clip band wide enough never to bind, the value loss is half of val/error and val/clipfrac is 0."""
    wide = dict(cliprange_value=100.0, ratio_threshold=1e9)
    assert _call("ppo_legacy/ppo/val/clipfrac", u, **wide) == 0.0
    assert _call("ppo_legacy/ppo/loss/value", u, **wide) == pytest.approx(
        _call("ppo_legacy/ppo/val/error", u) / 2, rel=1e-5, abs=1e-6)


@st.composite
def rollout(draw):
    """One step()'s rollout: rollout and reference log-probs [B, T] and a response mask with >= 1 token per row."""
    b, t = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    logp = torch.tensor(draw(st.lists(st.lists(st.floats(-5, -0.01), min_size=t, max_size=t), min_size=b,
                                      max_size=b)))
    ref = torch.tensor(draw(st.lists(st.lists(st.floats(-5, -0.01), min_size=t, max_size=t), min_size=b,
                                     max_size=b)))
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    mask = torch.tensor([[1.0 if j < n else 0.0 for j in range(t)] for n in lengths])
    return logp, ref, mask


@SETTINGS
@given(r=rollout(), kl_coef=st.floats(0.01, 1.0), estimator=st.sampled_from(["kl", "abs", "mse"]))
def test_ppo_legacy_non_score_reward_is_minus_coef_times_kl_per_response_token(r, kl_coef, estimator):
    """mean_non_score_reward = -kl_coef * objective/kl * B / (response tokens): a per-token mean of the same KL that
    objective/kl sums per response; `"abs"` and `"mse"` are never negative, `"kl"` is antisymmetric."""
    logp, ref, mask = r
    kl = snippet("ppo_legacy/objective/kl")(logp, ref, mask, kl_penalty=estimator)
    nsr = snippet("ppo_legacy/ppo/mean_non_score_reward")(logp, ref, mask, kl_coef, kl_penalty=estimator)
    assert nsr == pytest.approx(-kl_coef * kl * mask.shape[0] / float(mask.sum()), rel=1e-4, abs=1e-5)
    if estimator != "kl":
        assert kl >= 0.0 and nsr <= 0.0
    else:
        assert snippet("ppo_legacy/objective/kl")(ref, logp, mask) == pytest.approx(-kl, rel=1e-5, abs=1e-5)
    dist = snippet("ppo_legacy/objective/kl_dist")(logp, ref, mask, kl_penalty=estimator)
    assert float(dist.mean()) == pytest.approx(kl, rel=1e-5, abs=1e-5)


@SETTINGS
@given(kls=st.lists(st.floats(0, 30), min_size=0, max_size=40), n=st.sampled_from([4, 128, 512]))
def test_ppo_legacy_kl_coef_moves_at_most_the_clipped_rate_per_step(kls, n):
    """The coefficient logged after S updates lies within init * (1 -/+ 0.2 n / H)^S, and equals init when the
    controller is off."""
    fn = snippet("ppo_legacy/objective/kl_coef")
    history = torch.tensor(kls, dtype=torch.float64)
    value = fn(history, init_kl_coef=0.2, target=6.0, horizon=10000.0, batch_size=n)
    step = 0.2 * n / 10000.0
    assert 0.2 * (1 - step) ** len(kls) - 1e-12 <= value <= 0.2 * (1 + step) ** len(kls) + 1e-12
    assert fn(history, init_kl_coef=0.2, batch_size=n, adap_kl_ctrl=False) == 0.2


@SETTINGS
@given(u=ppo_updates(max_updates=1))
def test_ppo_legacy_advantages_mean_is_zero_for_one_whitened_mini_batch(u):
    """Whitened over the batch's response tokens, the advantages of a single mini-batch average to 0; only the
    per-update weighting of several mini-batches moves the logged value away from 0."""
    adv, mask = u["advantages"][0], u["mask"][0]
    n = mask.sum()
    mean = (adv * mask).sum() / n
    var = ((adv - mean) ** 2 * mask).sum() / (n - 1)
    assume(float(var) > 1e-4)
    whitened = (adv - mean) * torch.rsqrt(var + 1e-8)
    assert _call("ppo_legacy/ppo/policy/advantages_mean", {"advantages": [whitened], "mask": [mask]}) == pytest.approx(
        0.0, abs=1e-5)


def test_ppo_legacy_reward_shaping_explainer_agrees_with_the_pages():
    """The explainer's worked example, recomputed with the pages' own snippets."""
    found = {it.model.id: it.model for it in real_sources().explainers}
    e = found.get("reward_shaping")
    assert e is not None, "metrics/ppo_legacy/explainers/reward_shaping.yaml is gone: move this test"
    inputs = materialize(e.snippet.example)
    keys = compile_function(e.snippet.code, e.snippet.function, "reward_shaping")(**inputs)
    ref = torch.zeros_like(inputs["log_ratio"])  # log_ratio = logprobs - ref with ref = 0
    logp, mask = inputs["log_ratio"], inputs["mask"]
    assert keys[0] == pytest.approx(snippet("ppo_legacy/objective/kl")(logp, ref, mask), abs=1e-6)
    assert keys[1] == pytest.approx(
        snippet("ppo_legacy/ppo/mean_non_score_reward")(logp, ref, mask, inputs["kl_coef"]), abs=1e-6)
    assert keys[2] == pytest.approx(snippet("ppo_legacy/ppo/mean_scores")(inputs["scores"]), abs=1e-6)


# --------------------------------------------------------------------------------------------------------------------
# PPO (metrics/ppo): the KL estimators, padding where TRL masks it and where it does not, the stats cells
# --------------------------------------------------------------------------------------------------------------------


@cache
def ppo_page_snippet(metric_id: str, release: str | None = None):
    """The snippet of a PPO page as TRL ``release`` logs it (the newest range when None)."""
    from generator.resolve.variants import resolve

    if release is None:
        return snippet(metric_id)
    item = next(it for it in real_sources().metrics if it.model.id == metric_id)
    res = resolve(item, release)
    assert res is not None, f"{metric_id} is not logged by trl {release}"
    return compiled(res.metric.snippet.code, res.metric.snippet.function, f"{metric_id}@{release}")


@st.composite
def ppo_rollout_batch(draw):
    """(logprobs, ref_logprobs, padding_mask [B,T]) with at least one real token per response."""
    b, t = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    lp = draw(st.lists(st.lists(st.floats(-6, -0.01), min_size=t, max_size=t), min_size=b, max_size=b))
    ref = draw(st.lists(st.lists(st.floats(-6, -0.01), min_size=t, max_size=t), min_size=b, max_size=b))
    lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
    pad = [[j >= n for j in range(t)] for n in lengths]
    return torch.tensor(lp), torch.tensor(ref), torch.tensor(pad)


def _pad_rollout(lp, ref, pad, extra, value):
    """Append `extra` padding positions holding `value` to every response."""
    col = torch.full((lp.shape[0], extra), value)
    more = torch.ones_like(col, dtype=torch.bool)
    return torch.cat([lp, col], 1), torch.cat([ref, col - 1.0], 1), torch.cat([pad, more], 1)


@SETTINGS
@given(data=ppo_rollout_batch())
def test_ppo_k3_is_never_negative_and_k1_can_be(data):
    lp, ref, pad = data
    kl = ppo_page_snippet("ppo/objective/kl")
    assert kl(lp, ref, pad, kl_estimator="k3") >= -1e-6
    # swapping the two models flips the sign of every k1 term: one of the two sums is <= 0
    k1, k1_swapped = kl(lp, ref, pad, kl_estimator="k1"), kl(ref, lp, pad, kl_estimator="k1")
    assert k1 == pytest.approx(-k1_swapped, abs=1e-4)
    assert min(k1, k1_swapped) <= 1e-6
    assert kl(lp, lp, pad, kl_estimator="k1") == 0.0 and kl(lp, lp, pad, kl_estimator="k3") == 0.0


def test_ppo_k1_is_negative_when_the_reference_likes_the_sample_more():
    lp, ref, pad = torch.tensor([[-2.0, -1.0]]), torch.tensor([[-0.5, -0.5]]), torch.tensor([[False, False]])
    assert ppo_page_snippet("ppo/objective/kl")(lp, ref, pad, kl_estimator="k1") == pytest.approx(-2.0)


@SETTINGS
@given(data=ppo_rollout_batch(), extra=st.integers(1, 4), value=st.floats(-9, -0.01))
def test_ppo_masked_rollout_keys_ignore_padding(data, extra, value):
    """TRL masks padding in the KL, the non-score reward and (from 1.10.0) objective/entropy: appending padding
    positions, whatever they hold, changes nothing."""
    lp, ref, pad = data
    plp, pref, ppad = _pad_rollout(lp, ref, pad, extra, value)
    for est in ("k1", "k3"):
        kl = ppo_page_snippet("ppo/objective/kl")
        assert kl(plp, pref, ppad, kl_estimator=est) == pytest.approx(kl(lp, ref, pad, kl_estimator=est), abs=1e-5)
    ent = ppo_page_snippet("ppo/objective/entropy")
    assert ent(plp, ppad) == pytest.approx(ent(lp, pad), abs=1e-5)


@SETTINGS
@given(data=ppo_rollout_batch(), extra=st.integers(1, 4), value=st.floats(-9, -0.01))
def test_ppo_entropy_before_1_10_loses_one_per_padding_position(data, extra, value):
    """Before 1.10.0 TRL did not mask padding in objective/entropy: each added padding position lowers it by 1,
    whatever its log-probability was, and the gap to 1.10.0 is the mean padding count per response."""
    lp, ref, pad = data
    old, new = ppo_page_snippet("ppo/objective/entropy", "1.9.2"), ppo_page_snippet("ppo/objective/entropy")
    plp, _, ppad = _pad_rollout(lp, ref, pad, extra, value)
    assert old(plp, ppad) == pytest.approx(old(lp, pad) - extra, abs=1e-4)
    assert new(plp, ppad) - old(plp, ppad) == pytest.approx(ppad.float().sum(1).mean().item(), abs=1e-4)
    assert old(lp, pad) == pytest.approx(ppo_page_snippet("ppo/objective/entropy", "0.11.4")(lp, pad), abs=1e-6)


@SETTINGS
@given(data=ppo_rollout_batch(), scores=st.lists(st.floats(-3, 3), min_size=4, max_size=4), coef=st.floats(0, 0.5),
       est=st.sampled_from(["k1", "k3"]), penalty=st.sampled_from([None, 1.0]), eos=st.lists(st.booleans(), min_size=4,
       max_size=4))
def test_ppo_rlhf_reward_is_scores_plus_non_score_reward(data, scores, coef, est, penalty, eos):
    lp, ref, pad = data
    b = lp.shape[0]
    s = torch.tensor(scores[:b])
    responses = torch.tensor([[1 if e else 5, 6] for e in eos[:b]])  # id 1 is the EOS
    kwargs = dict(kl_coef=coef, kl_estimator=est)
    nsr = ppo_page_snippet("ppo/objective/non_score_reward")(lp, ref, pad, **kwargs)
    sc = ppo_page_snippet("ppo/objective/scores")(s, responses, 1, missing_eos_penalty=penalty)
    rlhf_fn = ppo_page_snippet("ppo/objective/rlhf_reward")
    rlhf = rlhf_fn(lp, ref, pad, s, responses, 1, missing_eos_penalty=penalty, **kwargs)
    assert rlhf == pytest.approx(sc + nsr, abs=1e-5)
    assert nsr == pytest.approx(-coef * ppo_page_snippet("ppo/objective/kl")(lp, ref, pad, kl_estimator=est), abs=1e-5)


@st.composite
def ppo_stats_cells(draw):
    """One update's micro-batches as TRL runs them: (E, N, G, micro-batches per mini-batch, new, old, pad)."""
    e, n, g = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    per_mini = -(-g // n)  # from 0.17.0 a mini-batch runs ceil(G / N) micro-batches
    b, t = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    count = e * n * per_mini

    def tensor(lo, hi):
        return torch.tensor(draw(st.lists(st.lists(st.floats(lo, hi), min_size=t, max_size=t), min_size=b, max_size=b)))

    new = [tensor(-4, -0.1) for _ in range(count)]
    old = [tensor(-4, -0.1) for _ in range(count)]
    pad = []
    for _ in range(count):
        lengths = draw(st.lists(st.integers(1, t), min_size=b, max_size=b))
        pad.append(torch.tensor([[j >= m for j in range(t)] for m in lengths]))
    return e, n, g, new, old, pad


@pytest.mark.filterwarnings("ignore:var\\(\\). degrees of freedom:UserWarning")  # one cell: NaN, as TRL logs it
@SETTINGS
@given(update=ppo_stats_cells())
def test_ppo_val_ratio_counts_padding_as_one_and_empty_cells_as_zero(update):
    """With equal policies every ratio is 1: val/ratio is exactly the share of written cells, ceil(G/N)/G (1 when
    N = 1 or G = 1), and its variance is that of a 0/1 mix (NaN with one cell)."""
    e, n, g, new, old, pad = update
    shape = dict(num_ppo_epochs=e, num_mini_batches=n, gradient_accumulation_steps=g)
    share = min(g, -(-g // n)) / g
    assert ppo_page_snippet("ppo/val/ratio")(old, old, pad, **shape) == pytest.approx(share, abs=1e-6)
    var = ppo_page_snippet("ppo/val/ratio_var")(old, old, pad, **shape)
    cells = e * n * g
    if cells == 1:
        assert math.isnan(var)
    else:
        assert var == pytest.approx(share * (1 - share) * cells / (cells - 1), abs=1e-5)
    # padding is not masked: changing what padding positions hold changes nothing, but padding itself counts as 1
    ratio = ppo_page_snippet("ppo/val/ratio")(new, old, pad, **shape)
    scrambled = [torch.where(p, torch.full_like(x, -20.0), x) for x, p in zip(new, pad, strict=True)]
    assert ppo_page_snippet("ppo/val/ratio")(scrambled, old, pad, **shape) == pytest.approx(ratio, abs=1e-6)


@SETTINGS
@given(update=ppo_stats_cells(), adv=st.floats(-2, 2).filter(lambda a: abs(a) > 1e-3))
def test_ppo_masked_loop_keys_ignore_padding_and_unmasked_ones_do_not(update, adv):
    """policy/clipfrac_avg and loss/policy_avg are masked means: extra padding columns change nothing.
    policy/approxkl_avg is unmasked: extra padding (Δ = 0) dilutes it by exactly T / (T + extra)."""
    e, n, g, new, old, pad = update
    shape = dict(num_ppo_epochs=e, num_mini_batches=n, gradient_accumulation_steps=g)
    advs = [torch.full_like(x, adv) * (~p) for x, p in zip(new, pad, strict=True)]

    def widen(xs, value):
        return [torch.cat([x, torch.full((x.shape[0], 2), value, dtype=x.dtype)], 1) for x in xs]

    wnew, wold, wadv, wpad = widen(new, -7.0), widen(old, -0.5), widen(advs, 0.0), widen(pad, True)
    for key in ("ppo/policy/clipfrac_avg", "ppo/loss/policy_avg"):
        fn = ppo_page_snippet(key)
        assert fn(wnew, wold, wadv, wpad, **shape) == pytest.approx(fn(new, old, advs, pad, **shape), abs=1e-5)
    frac = ppo_page_snippet("ppo/policy/clipfrac_avg")(new, old, advs, pad, **shape)
    assert 0.0 <= frac <= 1.0
    kl = ppo_page_snippet("ppo/policy/approxkl_avg")
    t = new[0].shape[1]
    assert kl(wnew, wold, wpad, **shape) == pytest.approx(kl(new, old, pad, **shape) * t / (t + 2), abs=1e-5)
    assert kl(new, old, pad, **shape) >= 0.0 and kl(old, old, pad, **shape) == 0.0
