"""A trainer is data: a made-up trainer (examples/add_a_metric/toy: a trainer file, two metrics, an explainer) added
to a copy of the sources, with no Python edited, gets its index, metric pages, coverage page and cheat-sheets on the
lines whose release has it, and its settings' defaults per release; a line after its removal points to the last
line that has it. What the trainer file holds that no page shows is an error. This is also the example of
examples/add_a_metric/, whose README's commands are run here on a copy."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from generator.errors import SourceErrors
from generator.pipeline import build_site, load_atlas

from .conftest import EXEMPLAR, ROOT, copy_sources

TOY = ROOT / "examples" / "add_a_metric" / "toy"
LATEST = "1.16"  # ToyTrainer was removed in 1.14.0
LINE = "1.12"  # the last line that has it


def toy_sources(dest: Path) -> Path:
    root = copy_sources(dest, [EXEMPLAR])
    path = root / EXEMPLAR
    path.write_text(re.sub(r"(?m)^related: .*$", "related: []", path.read_text(encoding="utf-8")), encoding="utf-8")
    shutil.copytree(TOY, root / "metrics" / "toy")
    return root


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The checked sources with the toy trainer, and the lines 1.16 and 1.12 built in English and Chinese."""
    root = toy_sources(tmp_path_factory.mktemp("toy") / "src")
    atlas = load_atlas(root)  # every rule, the toy snippets run on their worked examples
    site = build_site(root, site_dir=root / "site", versions=[LATEST, LINE], langs=["en", "zh"], atlas=atlas)
    return atlas, site / LINE


def test_a_line_shows_the_trainer_when_its_release_has_it(toy):
    atlas, _ = toy
    lines = {e.line.name: [t.id for t in e.trainers] for e in atlas.editions}
    # ToyTrainer: 1.0.0 to 1.14.0; the copy holds no other trainer's pages, so the 0.11 line shows none
    assert lines == {"1.16": ["grpo"], "1.12": ["grpo", "toy"], "0.26": ["grpo"], "0.11": []}
    toy = atlas.edition(LINE).trainer("toy")
    assert toy.cls.name == "ToyTrainer" and [r.metric.key for r in toy.metrics] == ["coins/heads", "coins/spread"]
    assert [(c.option, d.value) for c, d in toy.defaults] == [("flips", "16")]
    assert [(g.id, g.last.name) for g in atlas.edition(LATEST).removed] == [("toy", LINE)]
    assert atlas.edition("0.26").removed == ()  # not yet there is not removed


def test_its_pages_index_coverage_and_navigation_are_built(toy):
    _, site = toy
    for prefix in ("", "zh/"):
        index = (site / prefix / "toy/index.html").read_text(encoding="utf-8")
        for key in ("coins/heads", "coins/spread"):
            assert (site / prefix / "toy" / key / "index.html").is_file(), (prefix, key)
        assert (site / prefix / "toy/conformance/index.html").is_file()
        assert re.search(r"<code>flips</code></td>\s*<td><code>16</code>", index)
    en = (site / "toy/index.html").read_text(encoding="utf-8")
    assert "only to prove that a trainer is data" in en and 'id="coins">Coin flips' in en and "Their spread" in en
    zh = (site / "zh/toy/index.html").read_text(encoding="utf-8")
    assert "玩具训练器" in zh and "抛硬币" in zh
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "<code>ToyTrainer</code>" in home and ">TOY<" in home.replace("\n", "").replace(" ", "")
    page = (site / "toy/coins/heads/index.html").read_text(encoding="utf-8")
    assert "<code>ToyTrainer</code> · TRL 1.12.0" in page and "0.75" in page


def test_a_line_after_its_removal_points_to_its_last_line(toy):
    _, site = toy
    latest = site.parent / LATEST
    assert not (latest / "toy/coins/heads/index.html").exists()
    for prefix in ("", "zh/"):
        page = (latest / prefix / "toy/index.html").read_text(encoding="utf-8")
        assert f'href="/{LINE}/{prefix}toy/"' in page and "1.14.0" in page, prefix
    home = (latest / "index.html").read_text(encoding="utf-8")
    # the home page's trainer table keeps the removed trainer as a row that sends readers to its last line
    row = re.search(r"<tr>\s*<td><a href=\"toy/\">TOY</a></td>(.*?)</tr>", home, re.S)
    assert row and "<code>ToyTrainer</code>" in row[1] and "removed in TRL 1.14.0" in row[1], home
    assert f'href="/{LINE}/toy/"' in row[1]


def test_its_explainer_is_a_page_linked_from_the_keys_it_explains(toy):
    atlas, site = toy
    assert [e.model.id for e in atlas.edition(LINE).trainer("toy").explainers] == ["odds"]
    for prefix in ("", "zh/"):
        page = (site / prefix / "toy/explainers/odds/index.html").read_text(encoding="utf-8")
        assert "0.1875" in page and 'href="../../coins/heads/"' in page, prefix
        for key in ("coins/heads", "coins/spread"):
            html = (site / prefix / "toy" / key / "index.html").read_text(encoding="utf-8")
            assert 'href="../../explainers/odds/"' in html, (prefix, key)
        assert 'href="explainers/odds/"' in (site / prefix / "toy/index.html").read_text(encoding="utf-8")
    assert "同一组抛掷的正面比例与离散程度" in (site / "zh/toy/explainers/odds/index.html").read_text(encoding="utf-8")


def test_its_cheat_sheets_are_printed(toy):
    _, site = toy
    for lang in ("en", "zh"):
        for size in ("a4", "letter"):
            assert (site / f"cheatsheets/toy.{lang}.{size}.pdf").stat().st_size > 1000
    sheet = (site / "cheatsheets/toy/index.html").read_text(encoding="utf-8")
    assert "Heads or tails?" in sheet and "<code>flips=16</code>" in sheet and "ToyTrainer" in sheet


def test_the_version_page_says_where_the_trainer_does_not_exist_yet(toy):
    _, site = toy
    html = (site / "versions/index.html").read_text(encoding="utf-8")
    row = re.search(r"<td>0\.29\.1</td>(.*?)</tr>", html, re.S).group(1)
    assert "<code>ToyTrainer</code> does not exist in this release yet" in row
    assert "ToyTrainer" not in re.search(r"<td>1\.0\.0</td>(.*?)</tr>", html, re.S).group(1)


def test_a_category_without_a_metric_is_dead_text(tmp_path):
    root = toy_sources(tmp_path / "src")
    (root / "metrics/toy/coins/spread.yaml").unlink()
    (root / "metrics/toy/explainers/odds.yaml").unlink()  # it explains the spread too
    with pytest.raises(SourceErrors) as exc:
        load_atlas(root, run_snippets=False, use_cache=False)
    lines = [str(e) for e in exc.value.errors]
    text = (root / "metrics/toy/trainer.yaml").read_text(encoding="utf-8")
    line = text[: text.index("  - id: spread")].count("\n") + 1
    assert lines == [f"metrics/toy/trainer.yaml:{line}: categories[1]: shown on no page or cheat-sheet: no metric "
                     "of this category is logged by the release of any line; remove it"], lines
