"""No build is ever partial: a build that fails, is interrupted (SIGINT) or killed (SIGKILL) while mkdocs runs leaves
the previous `site/` exactly as it was, file for file, and the next build still works (it removes the work
folders that killed builds left behind)."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.build.publish import remove_stale_work
from generator.cli import main
from generator.errors import BuildError
from generator.pipeline import build_site, load_atlas

from .conftest import EXEMPLAR, ROOT

BUILD = ["build", "--lang", "en"]  # every version, one language: a few seconds, and three mkdocs runs to kill


def _hashes(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(site.rglob("*")) if p.is_file()}


def _atlas(root: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    # SIGINT as a terminal delivers it: a process started with SIGINT ignored (a pytest-xdist worker's child
    # inherits that) would never see Ctrl-C
    return subprocess.Popen([sys.executable, "-m", "generator.cli", "--root", str(root), *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _when_mkdocs_runs(root: Path, proc: subprocess.Popen[str], limit: float = 120.0) -> None:
    """Wait until the build has written its first mkdocs configuration (it does so right before mkdocs starts)."""
    end = time.monotonic() + limit
    while not list((root / "build").glob(f"build-{proc.pid}-*/mkdocs-*.yml")):
        assert proc.poll() is None, f"the build ended before mkdocs ran: {proc.communicate()}"
        assert time.monotonic() < end, "mkdocs never started"
        time.sleep(0.01)


def test_failed_interrupted_or_killed_build_leaves_site_as_it_was(mini_root, capsys):
    root, site = mini_root, mini_root / "site"
    first = _atlas(root, *BUILD)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, out + err
    before = _hashes(site)
    assert "1.16/index.html" in before and "versions.json" in before

    # a bad source: one error line, nothing published
    path = root / EXEMPLAR
    good = path.read_text(encoding="utf-8")
    path.write_text(good.replace("\nhealthy:", "\nhelthy:", 1), encoding="utf-8")
    assert main(["--root", str(root), *BUILD]) == 1
    assert [ln for ln in capsys.readouterr().out.splitlines() if ln] and _hashes(site) == before
    path.write_text(good, encoding="utf-8")

    # Ctrl-C while mkdocs runs: one line, exit 130, its work folder removed, the old site intact
    proc = _atlas(root, *BUILD)
    _when_mkdocs_runs(root, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err.strip().splitlines()[-1:]) == (130, "", ["interrupted"]), err
    assert "Traceback" not in err
    assert _hashes(site) == before
    assert not list((root / "build").glob("build-*"))

    # SIGKILL while mkdocs runs: no chance to clean up, the old site still intact
    proc = _atlas(root, *BUILD)
    _when_mkdocs_runs(root, proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _hashes(site) == before
    stale = list((root / "build").glob(f"build-{proc.pid}-*"))
    assert stale, "the killed build's work folder should still be there"

    # the next build works, publishes a whole site and removes the dead build's folder
    last = _atlas(root, *BUILD)
    out, err = last.communicate(timeout=300)
    assert last.returncode == 0, out + err
    assert not any(s.exists() for s in stale)
    assert not list((root / "build").glob("build-*"))
    assert set(_hashes(site)) == set(before)


def test_a_build_failing_inside_mkdocs_publishes_nothing(mini_root, monkeypatch):
    """A failure after other lines were built (here: the second mkdocs run to start, in a worker process) publishes
    none of them."""
    import generator.pipeline as pipeline

    site = mini_root / "site"
    site.mkdir()
    (site / "old.html").write_text("the previous site", encoding="utf-8")
    runs = mini_root / "runs"  # the workers are other processes: they count on the disk
    runs.mkdir()
    real = pipeline.run_mkdocs

    def failing_second(config, config_path):
        fd = os.open(runs / f"{config_path.name}.run", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        os.close(fd)
        if len(list(runs.iterdir())) == 2:
            raise BuildError("mkdocs build failed in strict mode: a broken link")
        real(config, config_path)

    monkeypatch.setattr(pipeline, "run_mkdocs", failing_second)
    atlas = load_atlas(mini_root)
    with pytest.raises(BuildError, match="a broken link"):
        build_site(mini_root, langs=["en"], atlas=atlas)
    assert len(list(runs.iterdir())) >= 2
    assert _hashes(site) == {"old.html": hashlib.sha256(b"the previous site").hexdigest()}
    assert not list((mini_root / "build").glob("build-*"))


def test_only_dead_builds_work_folders_are_removed(tmp_path):
    mine = tmp_path / f"build-{os.getpid()}-running"  # this process is alive: a build in progress
    dead = tmp_path / "build-999999999-killed"  # above any Linux pid_max: no such process
    legacy = tmp_path / "build-abc123"  # from before work folders named their owner
    other = tmp_path / "preview"  # `atlas serve`'s folder: not a work folder
    for folder in (mine, dead, legacy, other):
        (folder / "site").mkdir(parents=True)
    remove_stale_work(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, other.name])
    assert re.fullmatch(r"build-\d+-\w+", mine.name)
