"""Each version's page cites the code of a release it describes: a metric whose behaviour changed does not show the
newest release's line numbers on an older line's page, neither under Sources nor in a correction."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.read.metric import SourceRef
from generator.resolve.releases import in_range
from generator.resolve.variants import Resolved, resolve

from .conftest import real_atlas, real_sources
from .refs import code_refs


def metrics() -> dict:
    return {it.model.id: it for it in real_sources().metrics}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "metric_id" in metafunc.fixturenames:
        cases = [(e.line.name, r.id) for e in real_atlas().editions for r in e.metrics]
        metafunc.parametrize(("version", "metric_id"), cases, ids=[f"{v}:{m}" for v, m in cases])


def shown_refs(res: Resolved) -> list[tuple[str, SourceRef]]:
    """The TRL refs the page links to, each with what it is for."""
    refs = [(link.title, link.ref) for link in res.metric.sources if link.ref is not None]
    refs += [(f"correction {i + 1}", c.source) for i, c in enumerate(res.metric.corrections)]
    return [(what, ref) for what, ref in refs if ref.package == "trl"]


def misplaced_refs(res: Resolved) -> list[str]:
    """The TRL refs on the page that name a release outside the range the page describes."""
    start, end = res.releases
    return [f"{what}: {ref.file}:{ref.line} of trl {ref.version}"
            for what, ref in shown_refs(res) if not in_range(ref.version, start, end)]


def test_sources_cite_a_release_of_the_range_shown(version, metric_id):
    res = real_atlas().edition(version).metric(metric_id)
    it, trl = res.item, real_atlas().edition(version).release
    start, end = res.releases
    where = (f"{it.path}:{it.line('variants', res.variant, 'from')}" if res.variant is not None
             else f"{it.path}:{it.line('sources')}")
    assert not misplaced_refs(res), (
        f"{where}: the {version} page (trl {trl}) describes releases [{start}, {end or 'latest'}) but cites "
        + "; ".join(misplaced_refs(res))
        + ". Give that range its own `sources`, or the correction an `also_at` ref of a release in the range."
    )


def test_every_trl_ref_names_a_release():
    bad = [
        f"{it.path}:{it.line(*loc)}: {ref.file}:{ref.line} of trl {ref.version}"
        for it in metrics().values()
        for loc, ref in code_refs(it.model)
        if ref.package == "trl" and ref.version not in real_sources().config.trl_releases
    ]
    assert not bad, "TRL refs naming no release in atlas.yml trl_releases:\n" + "\n".join(bad)


def test_a_changed_metric_without_its_own_sources_is_caught():
    """The 0.26 page of `kl` (per-process mean there) would cite TRL 1.16.0 if its range gave no sources."""
    item = metrics()["grpo/kl"]
    kl = item.model
    res = resolve(item, "0.26.2")
    assert res.variant is not None and kl.variants[res.variant].sources, "kl's 0.26 range has its own sources"
    stripped = kl.model_copy(update={"variants": [v.model_copy(update={"sources": None}) for v in kl.variants]})
    found = misplaced_refs(resolve(replace(item, model=stripped), "0.26.2"))
    assert found and all("of trl 1.16.0" in f for f in found)
    assert misplaced_refs(res) == []


def test_a_correction_cites_its_ref_of_the_release_shown():
    """kl's first correction names the same line in 1.16.0 and 1.12.0: each page links to its own release's, and a
    correction without a ref in the range is caught."""
    item = metrics()["grpo/kl"]
    kl = item.model
    assert resolve(item, "1.16.0").metric.corrections[0].source.version == "1.16.0"
    assert resolve(item, "1.12.0").metric.corrections[0].source.version == "1.12.0"
    bare = kl.model_copy(update={"corrections": [c.model_copy(update={"also_at": []}) for c in kl.corrections]})
    found = misplaced_refs(resolve(replace(item, model=bare), "1.12.0"))
    assert found and all(f.startswith("correction ") and "of trl 1.16.0" in f for f in found), found
