"""The JSON Schemas that editors use are the ones the typed models export, and every metric and glossary file
points to its folder's schema."""

from __future__ import annotations

import json

import pytest

from generator import glossary, schema
from generator.cli import main

from .conftest import ROOT

# folder -> the committed schema of its files, and the function that exports it
SCHEMAS = {"metrics": schema.json_schema, "glossary": glossary.json_schema}
FILES = sorted((ROOT / "metrics").rglob("*.yaml")) + sorted((ROOT / "glossary").glob("*.yaml"))


@pytest.mark.parametrize("folder", sorted(SCHEMAS))
def test_committed_schema_is_current(folder):
    committed = ROOT / folder / "schema.json"
    assert json.loads(committed.read_text(encoding="utf-8")) == json.loads(json.dumps(SCHEMAS[folder]())), \
        f"{folder}/schema.json is stale: run `make schema`"


@pytest.mark.parametrize("folder", sorted(SCHEMAS))
def test_make_schema_writes_the_committed_file(folder, tmp_path):
    out = tmp_path / "schema.json"
    assert main(["schema", "-o", str(out)] + (["--glossary"] if folder == "glossary" else [])) == 0
    assert out.read_text(encoding="utf-8") == (ROOT / folder / "schema.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_source_file_declares_the_schema_for_editors(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    folder = path.relative_to(ROOT).parts[0]
    assert first.startswith(prefix), f"{path}: first line must be `{prefix}<relative path to {folder}/schema.json>`"
    target = (path.parent / first[len(prefix):]).resolve()
    assert target == (ROOT / folder / "schema.json").resolve(), f"{path}: schema path points to {target}"


@pytest.mark.parametrize(("folder", "required"), [("metrics", {"key", "trainer", "formula", "snippet", "healthy"}),
                                                  ("glossary", {"id", "term", "short", "definition"})])
def test_schema_rejects_unknown_fields_for_editors(folder, required):
    exported = SCHEMAS[folder]()
    assert exported["additionalProperties"] is False
    assert required <= set(exported["required"])
