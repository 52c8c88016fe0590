"""PPO's own checks of its recorded runs: the probes record what TRL used, the run settings exercise the code paths
the pages describe (a check that cannot fail is no check), and trl 1.9.2 against 1.12.0 shows the 1.10.0
`objective/entropy` fix as exactly the padding count the page predicts."""

from __future__ import annotations

import math

import pytest
import torch
from packaging.version import Version

from generator.check.snippets import compile_function
from generator.resolve.variants import resolve

from ....conftest import real_sources
from ...driver import Run
from .adapters import micro, rollout
from .records import MicroBatch, Rollout

BEFORE_FIX, AFTER_FIX = "1.9.2", "1.12.0"  # the last release before PR #6121 and the last release with PPO


def _batch_rows(run: Run) -> int:
    a = run.args
    rows = a.per_device_train_batch_size * a.gradient_accumulation_steps
    return rows * (1 if Version(run.trl_version) >= Version("0.17.0") else a.num_mini_batches)


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """One rollout per logged update, the micro-batches TRL ran in the order the snippets assume, and the counters
    TRL logged equal to what the probes saw."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        a = run.args
        per_mini = -(-a.local_mini_batch_size // a.per_device_train_batch_size)
        for e in run.entries():
            r = rollout(run, e)
            assert r.responses.shape[0] == _batch_rows(run) == a.local_batch_size, f"{run.name}@{e['step']}: rows"
            mbs = micro(run, e)
            assert len(mbs) == a.num_ppo_epochs * a.num_mini_batches * per_mini, f"{run.name}@{e['step']}: cells"
            for m in mbs:  # every row of the batch once per PPO epoch
                assert len(m.indices) == a.per_device_train_batch_size
            for epoch in range(a.num_ppo_epochs):
                rows = sorted(i for m in mbs if m.ppo_epoch == epoch for i in m.indices)
                assert rows == list(range(a.local_batch_size)), f"{run.name}@{e['step']}: epoch {epoch} rows"
            assert e["lr"] == r.lr, f"{run.name}@{e['step']}: the probe read another learning rate"
            assert e["episode"] == r.episode == e["step"] * _batch_rows(run)
            assert e["epoch"] == r.episode / run.facts["num_prompts"]
            # the probe's clock brackets the value TRL logged
            assert e["eps"] == int(r.episode / (r.clock[1] - r.clock[0])), f"{run.name}@{e['step']}: eps clock"


def _cells_written(run: Run, step: int) -> set[tuple[int, int, int]]:
    return {(m.ppo_epoch, m.mini_batch, m.micro_batch) for m in run.within(MicroBatch, step)}


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings reach the code paths the pages describe."""
    main, one = runs["main"], runs["one_cell"]
    a = main.args
    assert a.num_ppo_epochs > 1 and a.num_mini_batches > 1 and a.gradient_accumulation_steps > 1
    # padding and EOS: some responses stop early (padding follows), some never stop (the EOS penalty applies)
    rolls = main.of(Rollout)
    assert any(r.padding_mask.any() for r in rolls), "no padding: the unmasked means are not exercised"
    no_eos = [(~(r.postprocessed_responses == r.eos_token_id).any(1)).sum().item() for r in rolls]
    assert any(no_eos) and not all(n == r.responses.shape[0] for n, r in zip(no_eos, rolls, strict=True))
    # the policy moves within an update: clipping of both kinds happens
    values = lambda run, key: [e[key] for e in run.entries()]  # noqa: E731
    assert max(values(main, "policy/clipfrac_avg")) > 0, "the policy clip never bound"
    assert max(values(main, "val/clipfrac_avg")) > 0, "the value clip never bound"
    # a response with a negative k1 sum: the sign the docs' "should stay positive" forgets
    k1 = [((r.logprobs - r.ref_logprobs) * (~r.padding_mask)).sum(1) for r in rolls]
    assert any((k < -0.1).any() for k in k1), "no response has a clearly negative k1 KL"
    # the stats tensor: from 0.17.0 the main run leaves cells empty, before it fills them all
    full = a.num_ppo_epochs * a.num_mini_batches * a.gradient_accumulation_steps
    written = len(_cells_written(main, main.entries()[0]["step"]))
    if Version(release) >= Version("0.17.0"):
        assert written < full, f"trl {release}: every stats cell was written; the empty-cell pages are untested"
    else:
        assert written == full, f"trl {release}: {written} of {full} stats cells written"
    # the one-cell run: NaN variance, whitened rewards, no stop token (EOS may repeat in a response)
    assert all(math.isnan(e["val/ratio_var"]) for e in one.entries()), "one cell must log NaN"
    assert all(r.rewards_whitened is not None for r in one.of(Rollout)), "whiten_rewards was not exercised"
    assert any(((r.responses == r.eos_token_id).sum(1) > 1).any() for r in one.of(Rollout)), "no repeated EOS"
    if Version(release) >= Version("0.17.0"):
        assert one.args.kl_estimator == "k3" and min(values(one, "objective/kl")) >= 0


def _entropy_snippet(release: str):
    """The objective/entropy snippet of the page as TRL ``release`` logs it (1.9.2 is on no line)."""
    item = next(it for it in real_sources().metrics if it.model.id == "ppo/objective/entropy")
    res = resolve(item, release)
    return compile_function(res.metric.snippet.code, res.metric.snippet.function, f"{item.path}@{release}")


@pytest.mark.records("ppo", BEFORE_FIX, AFTER_FIX)
@pytest.mark.xdist_group(f"ppo-trl-{BEFORE_FIX}")
def test_entropy_fix_is_exactly_the_padding_count(recorded) -> None:
    """The same seeded runs on 1.9.2 and 1.12.0 sample the same responses; `objective/entropy` differs by exactly
    the mean number of padding positions per response, and each release's page snippet reproduces its own value."""
    before, after = recorded("ppo", BEFORE_FIX), recorded("ppo", AFTER_FIX)
    old_fn, new_fn = _entropy_snippet(BEFORE_FIX), _entropy_snippet(AFTER_FIX)
    compared = 0
    for name, run in after.items():
        assert [e["step"] for e in before[name].entries()] == [e["step"] for e in run.entries()]
        for e_old, e_new in zip(before[name].entries(), run.entries(), strict=True):
            r_old, r_new = rollout(before[name], e_old), rollout(run, e_new)
            assert torch.equal(r_old.responses, r_new.responses), f"{name}@{e_new['step']}: other responses"
            padding = r_new.padding_mask.float().sum(1).mean().item()
            gap = e_new["objective/entropy"] - e_old["objective/entropy"]
            assert abs(gap - padding) < 1e-5, f"{name}@{e_new['step']}: gap {gap}, padding per response {padding}"
            assert old_fn(r_old.logprobs, r_old.padding_mask) == pytest.approx(e_old["objective/entropy"], abs=1e-5)
            assert new_fn(r_new.logprobs, r_new.padding_mask) == pytest.approx(e_new["objective/entropy"], abs=1e-5)
            compared += 1
    assert compared and any(rollout(run, e).padding_mask.any() for run in after.values() for e in run.entries())
