"""Resolve once, render many: each metric is resolved against each line's release once, when the editions are
built; rendering pages, sheets and the JSON index of a line never resolves again; an edition cannot be changed."""

from __future__ import annotations

import dataclasses

import pytest

import generator.resolve.edition as edition_module
from generator.check import check
from generator.print.pdf import sheet_documents
from generator.render.api import metrics_api
from generator.render.i18n_pages import translation_report
from generator.render.pages import pages
from generator.render.view import View

from .conftest import real_sources


def test_each_metric_is_resolved_once_per_line_and_never_while_rendering(monkeypatch):
    calls = []
    real = edition_module.resolve
    monkeypatch.setattr(edition_module, "resolve", lambda item, release: calls.append((item.path, release))
                        or real(item, release))
    src = real_sources()
    atlas = check(src, run_snippets=False)
    lines = [e.line.trl for e in atlas.editions]
    assert sorted(calls) == sorted((it.path, release) for it in src.metrics for release in lines)
    calls.clear()
    views = [View(atlas, e, atlas.config.default) for e in atlas.editions]
    report = translation_report(views[0])
    for view in views:
        assert pages(view, report) and metrics_api(atlas, view.edition)["metrics"]
    assert sheet_documents(views[:1])[1]  # the sheets as HTML for every paper size: the PDF engine reads no metric
    assert calls == [], "rendering resolved a metric again"


def test_an_edition_cannot_be_changed():
    atlas = check(real_sources(), run_snippets=False)
    edition = atlas.editions[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        edition.line = atlas.editions[1].line  # type: ignore[misc]
    res = edition.metrics[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.variant = 0  # type: ignore[misc]
    with pytest.raises(Exception, match="frozen"):
        res.metric.key = "other"  # pydantic models are frozen too
