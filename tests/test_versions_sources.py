"""Each version's page cites the code of a release it describes: a metric whose behaviour changed does not show the
newest release's line numbers on an older line's page."""

from __future__ import annotations

import pytest

from generator.config import load_config
from generator.load import load_metrics
from generator.versions import Resolved, in_range, resolve

from .conftest import ROOT

CONFIG = load_config(ROOT)
METRICS = {it.model.id: it for it in load_metrics(ROOT)[0]}
CASES = [
    (version.name, mid)
    for version in CONFIG.versions
    for mid in sorted(METRICS)
    if METRICS[mid].model.trainer in version.trainers and resolve(METRICS[mid].model, version.trl) is not None
]


def misplaced_refs(res: Resolved) -> list[str]:
    """The TRL refs under the page's `sources` that name a release outside the range the page describes."""
    start, end = res.releases
    return [
        f"{link.title}: {link.ref.file}:{link.ref.line} of trl {link.ref.version}"
        for link in res.metric.sources
        if link.ref is not None and link.ref.package == "trl" and not in_range(link.ref.version, start, end)
    ]


@pytest.mark.parametrize(("version", "metric_id"), CASES, ids=[f"{v}:{m}" for v, m in CASES])
def test_sources_cite_a_release_of_the_range_shown(version, metric_id):
    it = METRICS[metric_id]
    trl = next(v.trl for v in CONFIG.versions if v.name == version)
    res = resolve(it.model, trl)
    start, end = res.releases
    where = (
        f"{it.path}:{it.line('variants', it.model.variants.index(res.variant), 'from')}"
        if res.variant
        else f"{it.path}:{it.line('sources')}"
    )
    assert not misplaced_refs(res), (
        f"{where}: the {version} page (trl {trl}) describes releases [{start}, {end or 'latest'}) but cites "
        + "; ".join(misplaced_refs(res))
        + ". Give that range its own `sources`."
    )


def test_every_trl_ref_names_a_release():
    bad = [
        f"{it.path}: {link.ref.version}"
        for it in METRICS.values()
        for links in [it.model.sources] + [v.sources or [] for v in it.model.variants]
        for link in links
        if link.ref is not None and link.ref.package == "trl" and link.ref.version not in CONFIG.trl_releases
    ]
    assert not bad, "TRL refs naming no release in atlas.yml trl_releases:\n" + "\n".join(bad)


def test_a_changed_metric_without_its_own_sources_is_caught():
    """The 0.26 page of `kl` (per-process mean there) would cite TRL 1.16.0 if its range gave no sources."""
    kl = METRICS["grpo/kl"].model
    res = resolve(kl, "0.26.2")
    assert res.variant is not None and res.variant.sources, "kl's 0.26 range has its own sources"
    stripped = kl.model_copy(update={"variants": [v.model_copy(update={"sources": None}) for v in kl.variants]})
    found = misplaced_refs(resolve(stripped, "0.26.2"))
    assert found and all("of trl 1.16.0" in f for f in found)
    assert misplaced_refs(res) == []
