"""Work spread over the machine's cores: forked worker processes, which inherit what the parent has loaded (the
checked atlas, imported modules), die with the parent, and leave Ctrl-C to it."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1


def cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops every worker
    try:  # a worker dies with its parent, even when the parent is killed (SIGKILL leaves no chance to clean up)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def run_parallel(tasks: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]], jobs: int | None = None) -> list[Any]:
    """``[fn(*args) for fn, args in tasks]``, on up to ``jobs`` (default: every core) forked processes, in the given
    order of results; longer tasks should come first. The first task that raises stops all and re-raises, as soon as
    it fails."""
    jobs = min(jobs or cores(), len(tasks))
    if jobs <= 1:
        return [fn(*args) for fn, args in tasks]
    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_init)
    try:
        pending = [pool.apply_async(fn, args) for fn, args in tasks]
        while not all(p.ready() for p in pending):
            for p in pending:
                if p.ready() and not p.successful():
                    p.get()  # a task failed: raise now, not after the longer tasks queued before it finish
            time.sleep(0.05)
        results = [p.get() for p in pending]
        pool.close()
        pool.join()
        return results
    except BaseException:
        pool.terminate()
        pool.join()
        raise
