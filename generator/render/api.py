"""The machine-readable index of a line, shipped as ``<line>/api/metrics.json``: every key with its titles, URLs
and healthy-range rules, for tools that read a run's logs."""

from __future__ import annotations

from typing import Any

from ..check.atlas import Atlas
from ..resolve.edition import Edition
from . import paths


def metrics_api(atlas: Atlas, edition: Edition) -> dict[str, Any]:
    cfg = atlas.config
    base = paths.line_url(cfg, edition.line)
    out = []
    for res in edition.metrics:
        m = res.metric
        h = m.healthy
        out.append({
            "id": m.id, "key": m.key, "logged_as": res.logged_as, "trainer": m.trainer, "category": m.category,
            "since": m.since, "until": m.until, "differs_from_latest": res.differs_from_latest,
            "title": {lang: m.title.get(lang) for lang in cfg.lang_codes},
            "summary": {lang: m.summary.get(lang) for lang in cfg.lang_codes},
            "url": {lang.code: f"{base}{lang.prefix}{paths.folder(paths.metric_doc(m))}" for lang in cfg.languages},
            "healthy": {
                "bounds": h.bounds.model_dump(), "range": h.range.model_dump() if h.range else None,
                "trend": h.trend,
                "red_flags": [{"op": f.op, "value": f.value} for f in h.red_flags],
            },
            "conformance_checked": m.conformance.checked,
            "source": cfg.edit_base + res.item.path,
        })
    trainers = [{"id": t.id, "class": t.cls.name, "module": t.cls.module, "config": t.cls.config,
                 "defaults": {c.option: d.value for c, d in t.defaults}} for t in edition.trainers]
    return {"trl": edition.release, "version": edition.line.name, "trainers": trainers, "metrics": out}
