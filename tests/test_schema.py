"""The JSON Schema that editors use is the one the typed models export, and every metric file points to it."""

from __future__ import annotations

import json

import pytest

from generator.schema import json_schema

from .conftest import ROOT

SCHEMA = ROOT / "metrics" / "schema.json"


def test_committed_schema_is_current():
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == json.loads(json.dumps(json_schema())), \
        "metrics/schema.json is stale: run `make schema`"


@pytest.mark.parametrize("path", sorted((ROOT / "metrics").rglob("*.yaml")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_metric_file_declares_the_schema_for_editors(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix), f"{path}: first line must be `{prefix}<relative path to metrics/schema.json>`"
    target = (path.parent / first[len(prefix):]).resolve()
    assert target == SCHEMA.resolve(), f"{path}: schema path points to {target}"


def test_schema_rejects_unknown_fields_for_editors():
    schema = json_schema()
    assert schema["additionalProperties"] is False
    assert {"key", "trainer", "formula", "snippet", "healthy"} <= set(schema["required"])
