"""Run reference snippets on their worked examples, in a child process with a time limit per snippet.

A snippet that raises, hangs, returns something that is not a number, or even ends its process gets one error line
of its own; the other snippets still run. Each batch runs in a fresh process forked by a warm runner that imported
torch once for the process that asks (`atlas check`, a `--watch` rebuild, a test worker)."""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from .. import cache as _cache
from ..cache import Cache
from ..errors import SourceError
from ..install import PROJECT
from ..read.load import Loaded
from ..read.yamlsrc import dotted
from ..resolve.variants import each
from .snippets import OutOfTime, defines, run_job


def _alarm(signum: int, frame: Any) -> None:
    raise OutOfTime


def _run_jobs_here(jobs: list[dict[str, Any]], replies: Any) -> None:
    """Run ``jobs`` in this process, one JSON line per job on ``replies`` as soon as it is done (so that the parent
    knows which job a dead process was running), each under its time limit."""

    def reply(obj: dict[str, Any]) -> None:
        replies.write(json.dumps(obj) + "\n")
        replies.flush()

    reply({"ready": True})
    signal.signal(signal.SIGALRM, _alarm)
    for job in jobs:
        try:
            signal.setitimer(signal.ITIMER_REAL, job["timeout"])
            try:
                result = run_job(job)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except OutOfTime:
            result = {"error": f"did not return within {job['timeout']:g} s", "at": "code", "volatile": True}
        reply(result)


def serve() -> None:
    """The warm runner: imports torch once (before any timer starts: loading torch is not a snippet's time), says
    ``{"ready": true}``, then for each request line ``{"jobs": [...], "limit": seconds}`` on stdin forks a fresh
    child that runs the jobs, and answers one line ``{"out", "err", "code"}`` (``code`` None when the child was
    killed at the limit). The child's output goes to a file: whatever a snippet prints, even through file descriptor
    1, never mixes with the replies. Ends when its stdin does (its parent exited)."""
    import torch  # noqa: F401

    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    answer.write(json.dumps({"ready": True}) + "\n")
    answer.flush()
    for line in sys.stdin:
        request = json.loads(line)
        jobs, limit = request["jobs"], float(request["limit"])
        read_end, write_end = os.pipe()
        with tempfile.TemporaryFile() as err:
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    _child(jobs, read_end, write_end, err.fileno(), answer)
                finally:
                    os._exit(1)  # the child never goes on as a second runner
            os.close(write_end)
            out, code = _collect(pid, read_end, limit)
            err.seek(0)
            answer.write(json.dumps({"out": out, "err": err.read().decode(errors="replace")[-4000:],
                                     "code": code}) + "\n")
            answer.flush()


def _child(jobs: list[dict[str, Any]], read_end: int, write_end: int, err: int, answer: Any) -> None:
    """In the forked child: nothing of the runner's pipes left to a snippet (stdin reads nothing, its prints go to
    ``err``), the replies on ``write_end``; never returns."""
    os.close(read_end)
    answer.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(err, 1)
    os.dup2(err, 2)
    code = 0
    try:
        _run_jobs_here(jobs, os.fdopen(write_end, "w", encoding="utf-8"))
    except BaseException:  # noqa: BLE001 - reported through the exit code, as a crashed process
        code = 1
    os._exit(code)


def _collect(pid: int, fd: int, limit: float) -> tuple[str, int | None]:
    """What the child ``pid`` wrote to ``fd`` until it closed it, and its exit code (negative: the signal that
    ended it; None: still running after ``limit`` seconds, so killed)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + limit
    killed = False
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            if not sel.select(left):
                continue
            if not (chunk := os.read(fd, 65536)):
                break
            chunks.append(chunk)
    os.close(fd)
    status = os.waitpid(pid, 0)[1]
    return b"".join(chunks).decode(errors="replace"), None if killed else os.waitstatus_to_exitcode(status)


def _last_line(output: str) -> str:
    """What a process that did not start said last."""
    return (output.strip().splitlines() or ["no output"])[-1]


class _Runner:
    """The warm runner of this process (`serve`), started on first use and kept while this process lives: each
    batch of jobs then costs a fork, not a new interpreter importing torch (4 s of CPU). A process forked from this
    one starts its own: the pipes belong to the process that started it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.owner = 0
        self.lock = threading.Lock()

    def _start(self) -> str | None:
        """Start the runner; None once it is ready, else why it did not start."""
        env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([sys.executable, "-c", "from generator.check.snippet_runs import serve; serve()"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                    cwd=PROJECT)
            if proc.stdout.readline().strip() == json.dumps({"ready": True}):
                self.proc, self.owner = proc, os.getpid()
                return None
            proc.wait()
            err.seek(0)
            return _last_line(err.read().decode(errors="replace"))

    def run(self, jobs: list[dict[str, Any]], limit: float) -> tuple[str, str, int | None] | str:
        """The jobs' replies (out), the child's output (err) and its exit code (None: killed at ``limit``), or why
        the runner did not start."""
        with self.lock:
            if self.owner != os.getpid() or self.proc is None or self.proc.poll() is not None:
                if why := self._start():
                    return why
            try:
                self.proc.stdin.write(json.dumps({"jobs": jobs, "limit": limit}) + "\n")
                self.proc.stdin.flush()
                answer = json.loads(self.proc.stdout.readline())
            except (OSError, ValueError):  # the runner itself died (killed from outside): a new one next time
                self.proc = None
                return "the snippet runner ended unexpectedly"
            return answer["out"], answer["err"], answer["code"]

    def close(self) -> None:
        if self.proc is not None and self.owner == os.getpid():
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        self.proc = None


_RUNNER = _Runner()
atexit.register(_RUNNER.close)


TIMEOUT_S = 10.0  # per snippet; a worked example is a handful of numbers, so anything slower is a bug


def _run_worker(jobs: list[dict[str, Any]], timeout: float) -> tuple[list[dict[str, Any]] | None, str]:
    """One fresh child process over ``jobs``, forked by the warm runner: its replies (None when it did not start)
    and how it ended."""
    ran = _RUNNER.run(jobs, timeout * len(jobs) + 60)
    if isinstance(ran, str):
        return None, ran
    out, err, code = ran
    if code is None:  # the time limit inside the child did not fire (a hang in C code)
        how = f"did not return within {timeout:g} s"
    elif code < 0:
        how = f"crashed the snippet runner ({signal.Signals(-code).name})"
    else:
        how = f"ended the snippet runner (exit code {code}); a snippet must return its value, not exit"
    try:
        replies = [json.loads(line) for line in out.splitlines() if line.strip()]
    except ValueError:
        replies = []
    if not replies or replies[0] != {"ready": True}:
        return None, _last_line(err)
    return replies[1:], how


def run_jobs(jobs: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]] | str:
    """A reply for every job, in order, or why the runner could not start. A job that ends or wedges its process
    is reported as such (volatile: never cached), and a fresh process goes on with the jobs after it."""
    results: list[dict[str, Any]] = []
    while len(results) < len(jobs):
        replies, how = _run_worker(jobs[len(results):], timeout)
        if replies is None:
            return how
        results += replies[: len(jobs) - len(results)]
        if len(results) < len(jobs):
            results.append({"error": how, "at": "code", "volatile": True})
    return results


def check_snippets(items: list[Loaded], timeout: float | None = None, cache: Cache | None = None) -> list[SourceError]:
    """Run every snippet on its example (CPU) in a child process; one error per failing snippet.
    A snippet whose code and example ran before (same torch) is not run again: its value, or its error when that
    does not depend on time, comes from the cache (a timeout or a crash is always run again)."""
    cache = cache or Cache(None)
    timeout = TIMEOUT_S if timeout is None else timeout
    torch_version = importlib.metadata.version("torch")
    todo, keys, results, jobs = [], [], [], []
    for it in items:
        for loc, snip, _ in each(it.model, "snippet"):
            if not defines(snip.code, snip.function):  # `validate` reports it; running it would say so again
                continue
            example = snip.example.model_dump()  # python mode keeps NaN (json.dumps writes NaN)
            k = _cache.key("snippet-run", snip.code, snip.function, example, torch_version)
            todo.append((it, loc))
            keys.append(k)
            results.append(cache.get(k))
            if results[-1] is None:
                jobs.append({"code": snip.code, "function": snip.function, "timeout": timeout, "example": example,
                             "filename": f"{it.path}#{'.'.join(map(str, loc))}"})
    if jobs:
        fresh = run_jobs(jobs, timeout)
        if isinstance(fresh, str):
            it, loc = next(t for t, r in zip(todo, results, strict=True) if r is None)
            return [SourceError(it.path, it.doc.line_of(loc), dotted(loc),
                                f"the snippet runner did not start: {fresh}")]
        queue = iter(fresh)
        results = [r if r is not None else next(queue) for r in results]
    errors = []
    for (it, prefix), k, res in zip(todo, keys, results, strict=True):
        if not res.get("volatile"):
            cache.put(k, res)
        if "error" in res:
            loc = prefix + (("example", "expected") if res.get("at") == "expected" else ("code",))
            errors.append(SourceError(it.path, it.doc.line_of(loc), dotted(loc), res["error"]))
    return errors
