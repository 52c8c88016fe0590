"""The distillation package's own checks of its recorded runs: the probes record what TRL used, and the run settings
exercise the code paths the snippets describe (a check that cannot fail is no check)."""

from __future__ import annotations

import math

import torch
from packaging.version import Version

from ...driver import Run
from .records import GenBatch, MicroBatch, OptStep
from .runs import SECOND_EOS


def _divergence(m: MicroBatch, beta: float, temperature: float) -> torch.Tensor:
    """The per-token divergence of one micro-batch from the recorded logits (an oracle independent of the pages)."""
    log_p_s = torch.log_softmax(m.student_logits.double() / temperature, dim=-1)
    log_p_t = torch.log_softmax(m.teacher_logits.double() / temperature, dim=-1)
    if beta == 0.0:
        return torch.nn.functional.kl_div(log_p_s, log_p_t, reduction="none", log_target=True).sum(-1)
    if beta == 1.0:
        return torch.nn.functional.kl_div(log_p_t, log_p_s, reduction="none", log_target=True).sum(-1)
    log_m = torch.logsumexp(torch.stack([log_p_s + math.log(1 - beta), log_p_t + math.log(beta)]), dim=0)
    return (beta * torch.nn.functional.kl_div(log_m, log_p_t, reduction="none", log_target=True).sum(-1)
            + (1 - beta) * torch.nn.functional.kl_div(log_m, log_p_s, reduction="none", log_target=True).sum(-1))


def test_harness_records_what_trl_used(release: str, runs: dict[str, Run]) -> None:
    """The recorded logits are the ones TRL's loss saw: each micro-batch's own loss is reproduced from them."""
    for run in runs.values():
        assert run.trl_version == release, f"{run.name}: recorded with trl {run.trl_version}, not {release}"
        beta, temperature = float(run.args.beta), float(run.args.temperature)
        for m in run.of(MicroBatch):
            d = _divergence(m, beta, temperature)
            expected = (d * m.mask).sum() / (m.num_items_in_batch.clamp(min=1) / m.num_processes)
            gap = abs(expected.item() - m.loss.item())
            assert gap < 1e-6, f"trl {release}, {run.name}@{m.log_step}: logits and TRL's loss differ by {gap}"
        for e in run.entries():
            assert run.within(OptStep, e["step"])[-1].learning_rate == e["learning_rate"], f"{run.name}: lr probe"
        for g in run.of(GenBatch):
            assert g.num_input_tokens_seen - g.num_input_tokens_seen_before == int(
                g.prompt_lengths.sum() + g.completion_lengths.sum()), f"{run.name}: token counter"


def test_runs_are_not_trivial(release: str, runs: dict[str, Run]) -> None:
    """The settings really exercise the code paths the snippets describe."""
    assert {float(r.args.beta) for r in runs.values()} >= {0.0, 0.5, 1.0}, "the three divergences are not all run"
    assert len({float(r.args.temperature) for r in runs.values()}) > 1, "only one temperature"
    assert any(r.args.logging_steps > 1 for r in runs.values()), "no window holds several optimizer steps"
    for run in runs.values():
        assert min(m.loss.item() for m in run.of(MicroBatch)) > 0, f"{run.name}: the student already is the teacher"
        stop = set(run.of(GenBatch)[0].eos_token_ids) | {run.of(GenBatch)[0].pad_token_id}
        finished = [ids[-1] in stop for g in run.of(GenBatch) for ids in g.completion_ids]
        assert any(finished) and not all(finished), f"{run.name}: need both cut and finished completions"
    second = runs["two_eos"].of(GenBatch)
    ends = {ids[-1] for g in second for ids in g.completion_ids}
    h = second[0].eos_token_ids[-1]
    if Version(release) >= Version("1.14.2"):  # the generation config's extra EOS id stops and ends completions
        assert len(second[0].eos_token_ids) == 2, "TRL did not pick up the second EOS id"
        assert h in ends, f"no completion ended with the second EOS id ('{SECOND_EOS}')"
    else:  # only the tokenizer's EOS counts
        assert len(second[0].eos_token_ids) == 1
