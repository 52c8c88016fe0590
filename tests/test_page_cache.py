"""Each page's Markdown conversion kept by content (`build.page_cache`): a second build converts nothing and writes
the same site; an edited page alone is converted again; the cache never hides a link or an anchor that stopped
resolving; `prune` removes only what no build used for a while."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import markdown
import pytest

from generator.build import page_cache
from generator.build.mkdocs_run import run_mkdocs
from generator.errors import BuildError
from generator.install import project_file
from generator.pipeline import build_site, load_atlas

from .conftest import ROOT


def _content(path: Path) -> bytes:
    """What a file says: mkdocs' own theme (of the tiny project) writes its build time into every page, and
    Pagefind lists the languages of its entry file in any order."""
    data = path.read_bytes()
    if path.name == "pagefind-entry.json":
        return json.dumps(json.loads(data), sort_keys=True).encode()
    return re.sub(rb"Build Date UTC : [^\n]*", b"", data)


def _files(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): hashlib.sha256(_content(p)).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture
def conversions(monkeypatch) -> list[int]:
    """How many pages Python-Markdown converted (in this process: `run_mkdocs` builds here)."""
    count = [0]
    convert = markdown.Markdown.convert

    def counted(self, source):
        count[0] += 1
        return convert(self, source)

    monkeypatch.setattr(markdown.Markdown, "convert", counted)
    return count


class Tiny:
    """A three-page mkdocs project with the atlas hooks, built strictly, its conversions kept in ``cache``."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.docs, self.cache = folder, folder / "docs", folder / "cache"
        self.docs.mkdir(parents=True)
        self.write("index.md", "# Home\n\nSee [the second page](b.md#details) and [the third](c.md).\n")
        self.write("b.md", "# B\n\n## Details\n\nSome *text* with a [link back](index.md).\n")
        self.write("c.md", "# C\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
        self.builds = 0

    def write(self, name: str, text: str) -> None:
        (self.docs / name).write_text(text, encoding="utf-8")

    def build(self) -> Path:
        self.builds += 1
        site = self.folder / f"site{self.builds}"
        config = {"site_name": "tiny", "docs_dir": str(self.docs), "site_dir": str(site), "theme": {"name": "mkdocs"},
                  "hooks": [str(project_file("generator/build/hooks.py", ROOT))],
                  "markdown_extensions": ["tables", "attr_list", {"toc": {"permalink": True}}],
                  "extra": {"atlas_pages": str(self.cache)},
                  "validation": {"links": {"not_found": "warn", "anchors": "warn"}}}
        run_mkdocs(config, self.folder / "mkdocs.yml")
        return site


def test_a_second_build_converts_nothing_and_writes_the_same_site(tmp_path, conversions):
    tiny = Tiny(tmp_path)
    first = tiny.build()
    assert conversions[0] == 3
    second = tiny.build()
    assert conversions[0] == 3, "the second build converted a page again"
    assert _files(first) == _files(second)
    assert 'id="details"' in (second / "b/index.html").read_text(encoding="utf-8")


def test_an_edited_page_alone_is_converted_again(tmp_path, conversions):
    tiny = Tiny(tmp_path)
    tiny.build()
    tiny.write("c.md", "# C\n\nNow a paragraph.\n")
    site = tiny.build()
    assert conversions[0] == 4
    assert "Now a paragraph." in (site / "c/index.html").read_text(encoding="utf-8")


def test_a_link_that_no_longer_resolves_is_never_hidden(tmp_path, conversions):
    tiny = Tiny(tmp_path)
    tiny.build()
    (tiny.docs / "c.md").unlink()  # index.md is unchanged, but its link to c.md now finds nothing
    with pytest.raises(BuildError, match="c.md"):
        tiny.build()
    with pytest.raises(BuildError, match="c.md"):  # nor by the failed build: a conversion that warned is not kept
        tiny.build()


def test_an_anchor_removed_from_another_page_is_still_reported(tmp_path, conversions):
    tiny = Tiny(tmp_path)
    tiny.build()
    tiny.write("b.md", "# B\n\nNo details any more.\n")  # index.md, kept, links to b.md#details
    with pytest.raises(BuildError, match="details"):
        tiny.build()
    assert conversions[0] == 4  # index.md came from the cache, and its anchor link was checked all the same


def test_the_real_pipeline_writes_the_same_pages_from_the_cache(mini_root):
    """A one-metric copy built twice in English and Chinese (mkdocs-static-i18n resolves the links per language):
    the second build's pages come from the cache and are the same, file for file, and so do the theme's compiled
    templates (Jinja's bytecode: none is compiled again)."""
    atlas = load_atlas(mini_root, run_snippets=False)
    first = build_site(mini_root, site_dir=mini_root / "site1", langs=["en", "zh"], atlas=atlas)
    kept = {p: p.stat().st_mtime for p in (mini_root / ".cache/atlas/pages").glob("*/*.z")}
    assert kept
    templates = {p: p.stat().st_mtime_ns for p in (mini_root / ".cache/atlas/templates").iterdir()}
    assert len(templates) > 10, templates  # Material's base, partials and ours
    time.sleep(0.05)
    second = build_site(mini_root, site_dir=mini_root / "site2", langs=["en", "zh"], atlas=atlas)
    assert _files(first) == _files(second)
    assert {p for p in (mini_root / ".cache/atlas/pages").glob("*/*.z")} == set(kept)
    assert all(p.stat().st_mtime > t for p, t in kept.items()), "every entry should have been used again"
    assert {p: p.stat().st_mtime_ns for p in (mini_root / ".cache/atlas/templates").iterdir()} == templates


def test_prune_removes_only_entries_no_build_used_for_a_while(tmp_path):
    old, new = tmp_path / "ab" / "ab1.z", tmp_path / "cd" / "cd1.z"
    for path in (old, new):
        path.parent.mkdir()
        path.write_bytes(b"x")
    stale = time.time() - (page_cache.KEEP_DAYS + 1) * 86400
    os.utime(old, (stale, stale))
    assert page_cache.prune(tmp_path) == 1
    assert not old.exists() and new.exists()
