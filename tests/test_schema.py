"""The JSON Schemas that editors use are the ones the typed models export, and every source file points to the
schema of its kind."""

from __future__ import annotations

import json

import pytest

from generator.cli import main, schema_of

from .conftest import ROOT

# kind -> the committed schema, and the `atlas schema` flag that writes it
SCHEMAS = {"metric": ("metrics/schema.json", []), "glossary": ("glossary/schema.json", ["--glossary"]),
           "trainer": ("metrics/trainer.schema.json", ["--trainer"]),
           "explainer": ("metrics/explainer.schema.json", ["--explainer"])}


def _kind(rel: str) -> str:
    if rel.startswith("glossary/"):
        return "glossary"
    return "trainer" if rel.endswith("/trainer.yaml") else "explainer" if "/explainers/" in rel else "metric"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "source_file" in metafunc.fixturenames:
        files = sorted((ROOT / "metrics").rglob("*.yaml")) + sorted((ROOT / "glossary").glob("*.yaml"))
        metafunc.parametrize("source_file", files, ids=lambda p: p.relative_to(ROOT).as_posix())


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_committed_schema_is_current(kind):
    committed = ROOT / SCHEMAS[kind][0]
    assert json.loads(committed.read_text(encoding="utf-8")) == json.loads(json.dumps(schema_of(kind))), \
        f"{SCHEMAS[kind][0]} is stale: run `make schema`"


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_make_schema_writes_the_committed_file(kind, tmp_path):
    out = tmp_path / "schema.json"
    assert main(["schema", "-o", str(out), *SCHEMAS[kind][1]]) == 0
    assert out.read_text(encoding="utf-8") == (ROOT / SCHEMAS[kind][0]).read_text(encoding="utf-8")


def test_source_file_declares_the_schema_for_editors(source_file):
    rel = source_file.relative_to(ROOT).as_posix()
    first = source_file.read_text(encoding="utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix), f"{rel}: first line must be `{prefix}<relative path to its schema>`"
    target = (source_file.parent / first[len(prefix):]).resolve()
    assert target == (ROOT / SCHEMAS[_kind(rel)][0]).resolve(), f"{rel}: schema path points to {target}"


@pytest.mark.parametrize(("kind", "required"), [("metric", {"key", "trainer", "formula", "snippet", "healthy"}),
                                                ("glossary", {"id", "term", "short", "definition"}),
                                                ("trainer", {"id", "classes", "intro", "categories"}),
                                                ("explainer", {"id", "trainer", "title", "body", "metrics"})])
def test_schema_rejects_unknown_fields_for_editors(kind, required):
    exported = schema_of(kind)
    assert exported["additionalProperties"] is False
    assert required <= set(exported["required"])
