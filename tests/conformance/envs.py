"""One pinned virtualenv per TRL release under test, and the recording of a trainer's runs in a subprocess.

A release with a lock file ``tests/conformance/requirements-trl-<release>.txt`` gets its own virtualenv in
``.cache/atlas/venvs/trl-<release>`` (git-ignored), created on first use and re-created when the lock file or the
base interpreter changes (both are hashed into a stamp written last, so a half-built virtualenv is never used),
then warmed: what the recordings import is compiled once (``warm.py``), not in every recording process.
The project's own release (``requirements.txt``, the interpreter running the tests) needs no lock of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from ..shared import file_lock

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
VENVS = ROOT / ".cache" / "atlas" / "venvs"
STAMP = ".atlas-lock-sha256"
WARMED = ".atlas-warmed"  # the stamp again, once `warm.py` has compiled what the recordings import
INSTALL_TIMEOUT_S = 1800
RUN_TIMEOUT_S = 900


class EnvError(RuntimeError):
    """A TRL release's virtualenv could not be made, or its runs failed."""


def lock_file(release: str) -> Path:
    return HERE / f"requirements-trl-{release}.txt"


def _stamp(lock: Path) -> str:
    # the real file: `make test` runs this module with the base python3 while the tests run it from .venv/
    base = f"{sys.version_info[:3]} {os.path.realpath(getattr(sys, '_base_executable', sys.executable))}"
    return hashlib.sha256(lock.read_bytes() + base.encode()).hexdigest()


def _run(cmd: list[str], log: Path, timeout: float, **kwargs) -> None:
    with open(log, "a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, **kwargs)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise EnvError(f"`{' '.join(cmd)}` failed with exit code {proc.returncode} (log: {log}):\n{tail}")


def _refuse_cuda_torch(python: Path, lock: Path, log: Path) -> None:
    """Resolve the lock without installing, and stop if pip would bring a CUDA build of torch (GBs of downloads)."""
    report = log.with_suffix(".plan.json")
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-r",
            str(lock),
        ],
        log,
        INSTALL_TIMEOUT_S,
    )
    plan = {i["metadata"]["name"].lower(): i for i in json.loads(report.read_text())["install"]}
    cuda = sorted(n for n in plan if n.startswith("nvidia-") or n == "triton")
    torch_version = plan.get("torch", {}).get("metadata", {}).get("version", "")
    if cuda or "+cu" in torch_version:
        raise EnvError(
            f"{lock.relative_to(ROOT)}: pip would install torch {torch_version} "
            f"from {plan['torch']['download_info']['url']} with {cuda}: refusing a CUDA build. Make the CPU wheel "
            "of torch reachable (e.g. PIP_FIND_LINKS or the PyTorch CPU index) and run again."
        )


def ensure_venv(release: str) -> Path:
    """The Python of the release's virtualenv, built from its lock file when missing or stale."""
    lock = lock_file(release)
    venv = VENVS / f"trl-{release}"
    python = venv / "bin" / "python"
    stamp = _stamp(lock)
    with file_lock(VENVS / f"trl-{release}.lock"):
        if _holds(venv / STAMP, stamp) and python.exists():
            if not _holds(venv / WARMED, stamp):
                _warm(python, venv, stamp)
            return python
        shutil.rmtree(venv, ignore_errors=True)
        log = _install_log(venv)
        log.write_text("")
        base = getattr(sys, "_base_executable", sys.executable)
        _run([base, "-m", "venv", str(venv)], log, 300)
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        _refuse_cuda_torch(python, lock, log)
        # --no-compile: byte-compiling all of torch is a third of the install; `_warm` compiles what is used
        _run(
            [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "-r", str(lock)],
            log,
            INSTALL_TIMEOUT_S,
            env=env,
        )
        (venv / STAMP).write_text(stamp + "\n")
        _warm(python, venv, stamp)
    return python


def _holds(marker: Path, stamp: str) -> bool:
    return marker.is_file() and marker.read_text().strip() == stamp


def _install_log(venv: Path) -> Path:
    return venv.parent / f"{venv.name}.install.log"


def _warm(python: Path, venv: Path, stamp: str) -> None:
    """Compile what the recordings import (``warm.py``), keeping the bytecode; then mark the virtualenv warmed."""
    _run([str(python), "-m", "tests.conformance.warm"], _install_log(venv), INSTALL_TIMEOUT_S, cwd=ROOT,
         env=_release_env())
    (venv / WARMED).write_text(stamp + "\n")


def python_for(release: str) -> str:
    """The interpreter whose installed TRL is ``release``: its own virtualenv, or the one running the tests."""
    if lock_file(release).is_file():
        return str(ensure_venv(release))
    try:
        here = metadata.version("trl")
    except metadata.PackageNotFoundError:
        here = None
    if here != release:
        raise EnvError(
            f"trl {release}: no lock file {lock_file(release).relative_to(ROOT)}, and this interpreter has "
            f"trl {here} ({sys.executable})"
        )
    return sys.executable


def _release_env() -> dict[str, str]:
    """This process's environment without what would make another interpreter import this one's packages, and
    with bytecode written: the virtualenvs are installed uncompiled, so each module is compiled once, not per run."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop}


def record_runs(trainers: list[str], release: str, out_dir: Path,
                describe: list[tuple[str, str, str]] | None = None) -> float:
    """Record every run of each of ``trainers`` for ``release`` in one process of that release's interpreter
    (``record.py``) into ``out_dir``/<trainer>.pt (<trainer>.error for one that failed, the others go on), and the
    classes ``describe`` names into ``out_dir``/api.json (``describe.py``); return the seconds it took."""
    python = python_for(release)
    log = out_dir / "runs.log"
    start = time.perf_counter()
    cmd = [python, "-m", "tests.conformance.record", "--trainer", ",".join(trainers), "--trl-version", release,
           "--out-dir", str(out_dir)]
    if describe:
        cmd += ["--describe", json.dumps(describe)]
    try:
        _run(cmd, log, RUN_TIMEOUT_S * len(trainers), cwd=ROOT, env=_release_env())
    except EnvError:
        if not any(out_dir.glob("*.error")):  # the process itself failed; otherwise each trainer says its own error
            raise
    return time.perf_counter() - start


def run_python(release: str, code: str, timeout: float = 300) -> str:
    """Run ``code`` with the interpreter whose TRL is ``release`` (offline); return what it printed."""
    return _python(release, ["-c", code], timeout)


def run_module(release: str, module: str, *args: str, timeout: float = 300) -> str:
    """Run the project's ``module`` (``python -m``) with the interpreter whose TRL is ``release`` (offline)."""
    return _python(release, ["-m", module, *args], timeout)


def _python(release: str, args: list[str], timeout: float) -> str:
    env = {**_release_env(), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([python_for(release), *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-25:])
        raise EnvError(f"trl {release}: python {args[0]} failed with exit code {proc.returncode}:\n{tail}")
    return proc.stdout


def releases_with_locks() -> list[str]:
    """Every TRL release that has its own lock file, hence its own virtualenv."""
    return sorted(p.stem.removeprefix("requirements-trl-") for p in HERE.glob("requirements-trl-*.txt"))


def main() -> None:
    """``python3 -m tests.conformance.envs``: make (or confirm) every release's virtualenv, two at a time: part of
    `make test`'s set-up, so that the test run itself only reads them. It needs no package beyond the standard
    library, so that `make` runs it with the base interpreter beside the project's own install (pip installs on one
    core: side by side they use both)."""
    def make(release: str) -> str:
        start = time.perf_counter()
        ensure_venv(release)
        return f"trl {release}: {VENVS / f'trl-{release}'} ready ({time.perf_counter() - start:.0f} s)"

    with ThreadPoolExecutor(2) as pool:
        for line in pool.map(make, releases_with_locks()):
            print(line, flush=True)


if __name__ == "__main__":
    main()
