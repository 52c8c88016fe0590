"""Parsed sources are kept by content (`generator/read/parsed.py`): a read of unchanged files, in the same process or
a later one, parses nothing and gives the very documents a parse gives; an edited file, and any file with an error,
is parsed again; a damaged store is ignored."""

from __future__ import annotations

import pickle

import pytest

from generator.read import parsed, yamlsrc
from generator.read.sources import read_sources

from .conftest import EXEMPLAR, copy_sources

STORE = ".cache/atlas/parsed.pickle"


@pytest.fixture
def counted(monkeypatch):
    """The files `yamlsrc.parse` really parses, in a process that has parsed nothing yet."""
    monkeypatch.setattr(parsed, "_MEMO", {})
    monkeypatch.setattr(parsed, "_STORED", {})
    seen: list[str] = []
    real = yamlsrc.parse

    def parse(path, raw):
        seen.append(path)
        return real(path, raw)

    monkeypatch.setattr(yamlsrc, "parse", parse)
    return seen


def _docs(root):
    return {d.path: (d.data, d.lines) for d in read_sources(root).docs}


def _stored(root) -> set[str]:
    return set(pickle.loads((root / STORE).read_bytes()))


def _fresh_process(monkeypatch):
    monkeypatch.setattr(parsed, "_MEMO", {})
    monkeypatch.setattr(parsed, "_STORED", {})


def test_unchanged_sources_are_parsed_once_and_read_alike(tmp_path, counted, monkeypatch):
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    first = _docs(root)
    assert EXEMPLAR in counted and (root / STORE).is_file()
    counted.clear()
    assert _docs(root) == first and not counted  # the same process
    _fresh_process(monkeypatch)
    assert _docs(root) == first and not counted  # a later one, through the store
    _fresh_process(monkeypatch)
    assert _docs(copy_sources(tmp_path / "copy", [EXEMPLAR])) == first and EXEMPLAR in counted  # no store there


def test_an_edited_file_is_parsed_again_and_the_store_follows(tmp_path, counted, monkeypatch):
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    _docs(root)
    before = _stored(root)
    path = root / EXEMPLAR
    path.write_text(path.read_text(encoding="utf-8").replace("\nsince:", "\n# an edit\nsince:", 1), encoding="utf-8")
    counted.clear()
    _fresh_process(monkeypatch)
    edited = _docs(root)
    assert counted == [EXEMPLAR]
    assert edited[EXEMPLAR][1] != {}  # lines moved by one where the comment went
    _fresh_process(monkeypatch)
    counted.clear()
    assert _docs(root) == edited and not counted
    after = _stored(root)  # the edited file's parse replaced the old one's; nothing else changed
    assert len(after) == len(before) and len(after - before) == 1


def test_a_file_with_an_error_is_parsed_every_time(tmp_path, counted):
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    (root / EXEMPLAR).write_text("title: [unclosed\n", encoding="utf-8")
    for _ in range(2):
        sources = read_sources(root)
        assert any(e.path == EXEMPLAR and e.field == "yaml" for e in sources.errors)
    assert counted.count(EXEMPLAR) == 2


def test_a_damaged_store_is_ignored(tmp_path, counted, monkeypatch):
    root = copy_sources(tmp_path / "src", [EXEMPLAR])
    first = _docs(root)
    (root / STORE).write_bytes(b"\x80\x05not a pickle")
    _fresh_process(monkeypatch)
    counted.clear()
    assert _docs(root) == first and EXEMPLAR in counted
