"""Run reference snippets on their worked examples, in a child process with a time limit per snippet.

A snippet that raises, hangs, returns something that is not a number, or even ends its process gets one error line
of its own; the other snippets still run."""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import re
import signal
import subprocess
import sys
from typing import Any

from .. import cache as _cache
from ..cache import Cache
from ..errors import SourceError
from ..install import PROJECT
from ..read.load import Loaded
from ..read.metric import Example, Tensor
from ..read.yamlsrc import dotted
from ..resolve.variants import each

_DTYPES = {"float32": "float32", "float64": "float64", "int64": "int64", "bool": "bool"}


def materialize(example: Example, device: str = "cpu") -> dict[str, Any]:
    """The example's inputs as keyword arguments: tensors on ``device``, plain values as they are."""
    import torch

    def tensor(value: Any, dtype: str) -> Any:
        return torch.tensor(value, dtype=getattr(torch, _DTYPES[dtype]), device=device)

    out: dict[str, Any] = {}
    for name, spec in example.inputs.items():
        if isinstance(spec, Tensor):
            out[name] = [tensor(v, spec.dtype) for v in spec.value] if spec.list else tensor(spec.value, spec.dtype)
        else:
            out[name] = spec
    return out


def defines(code: str, function: str) -> bool:
    """The code defines ``function`` at top level (`atlas check` says so when it does not; it is not run then)."""
    return re.search(rf"^def {re.escape(function)}\(", code, flags=re.M) is not None


def compile_function(code: str, function: str, filename: str) -> Any:
    """Execute the snippet's code in a fresh namespace and return its function."""
    namespace: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - snippets are our own reviewed sources
    return namespace[function]


class WrongResult(TypeError):
    """A snippet returned something that is neither a real number, nor a list of them, nor None."""


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a result of 10,000 numbers is not an error line)."""
    return _cut(repr(value), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(v: Any) -> float:
    if hasattr(v, "tolist"):  # a 0-d tensor or a numpy scalar
        v = v.tolist()
    if isinstance(v, bool):
        raise WrongResult(f"returned a boolean ({v}), expected a number")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, complex):
        raise WrongResult(f"returned a complex number {_short(v)}, expected a real number")
    raise WrongResult(f"returned a {type(v).__name__} {_short(v)}, expected a number")


def as_floats(value: Any) -> float | list[float | None] | None:
    """A snippet's result as plain floats: a number or 0-d tensor, a list or 1-d tensor of them, or None.
    Anything else (a string, a complex number, a matrix) raises WrongResult, which says what it was."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
    if getattr(value, "ndim", 0) > 1:
        raise WrongResult(f"returned a tensor of shape {tuple(value.shape)}, expected one number or a list of numbers")
    if getattr(value, "ndim", 0) == 1 and hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [None if v is None else _number(v) for v in value]
    return None if value is None else _number(value)


def shape_problem(got: Any, expected: float | list[float | None] | None) -> str | None:
    """Why ``got`` cannot be compared with ``expected`` at all (several values against one), or None."""
    if isinstance(expected, list) and not isinstance(got, list):
        return f"returned one value {_short(got)}, expected a list of {len(expected)} values"
    if isinstance(expected, list) and len(got) != len(expected):
        return f"returned {len(got)} values {_short(got)}, expected {len(expected)}"
    if not isinstance(expected, list) and isinstance(got, list):
        return f"returned {len(got)} values {_short(got)}, expected one number"
    return None


def mismatch(got: Any, expected: float | list[float] | None, atol: float) -> str | None:
    """Why ``got`` differs from ``expected`` (None when it matches within ``atol``)."""

    def close(a: float | None, b: float | None) -> bool:
        if b is None or (isinstance(b, float) and math.isnan(b)):
            return a is None or math.isnan(a)
        return a is not None and not math.isnan(a) and abs(a - b) <= atol + 1e-9 * abs(b)

    if problem := shape_problem(got, expected):
        return problem
    if isinstance(expected, list):
        bad = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if not close(a, b)]
        return f"returned {_short(got)}, expected {_short(expected)} (atol {atol:g})" if bad else None
    return None if close(got, expected) else f"returned {got!r}, expected {expected!r} (atol {atol:g})"


def _raised(exc: BaseException, filename: str) -> str:
    """What a snippet raised, on one line, with the line of the snippet it came from."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return f"syntax error: {exc.msg} (snippet line {exc.lineno})"
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f" (snippet line {line})" if line else ""
    return " ".join(f"raised {type(exc).__name__}: {_cut(str(exc), 200)}{where}".split())


def _run_job(job: dict[str, Any]) -> dict[str, Any]:
    """``{"value": ...}``, or ``{"error": ..., "at": "code" | "expected"}`` (the field the error line names)."""
    example = Example.model_validate(job["example"])
    try:
        fn = compile_function(job["code"], job["function"], job["filename"])
        got = as_floats(fn(**materialize(example, job.get("device", "cpu"))))
    except _Timeout:
        raise
    except WrongResult as exc:
        return {"error": str(exc), "at": "code"}
    except BaseException as exc:  # noqa: BLE001 - any failure of a snippet is reported, even SystemExit
        return {"error": _raised(exc, job["filename"]), "at": "code"}
    if problem := shape_problem(got, example.expected):
        return {"error": problem, "at": "code"}
    problem = mismatch(got, example.expected, example.atol)
    return {"error": problem, "at": "expected"} if problem else {"value": got}


class _Timeout(BaseException):  # not an Exception: a snippet's `except Exception` must not swallow it
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _worker() -> None:
    """Jobs as JSON on stdin. Replies as JSON lines on the original stdout: ``{"ready": true}``, then one per job
    as soon as it is done, so that the parent knows which job a dead process was running."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever a snippet prints, even through file descriptor 1, goes to stderr, not into the replies
    sys.stdout = sys.stderr
    jobs = json.load(sys.stdin)
    import torch  # noqa: F401 - before any timer starts: loading torch is not the snippet's time

    def reply(obj: dict[str, Any]) -> None:
        replies.write(json.dumps(obj) + "\n")
        replies.flush()

    reply({"ready": True})
    signal.signal(signal.SIGALRM, _alarm)
    for job in jobs:
        try:
            signal.setitimer(signal.ITIMER_REAL, job["timeout"])
            try:
                result = _run_job(job)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Timeout:
            result = {"error": f"did not return within {job['timeout']:g} s", "at": "code", "volatile": True}
        reply(result)


TIMEOUT_S = 10.0  # per snippet; a worked example is a handful of numbers, so anything slower is a bug


def _run_worker(jobs: list[dict[str, Any]], timeout: float) -> tuple[list[dict[str, Any]] | None, str]:
    """One child process over ``jobs``: its replies (None when it did not start) and how it ended."""
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "generator.check.snippets"], input=json.dumps(jobs), capture_output=True,
            text=True, env=env, timeout=timeout * len(jobs) + 60, cwd=PROJECT)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
        how = (f"crashed the snippet runner ({signal.Signals(-code).name})" if code < 0 else
               f"ended the snippet runner (exit code {code}); a snippet must return its value, not exit")
    except subprocess.TimeoutExpired as exc:  # the time limit inside the child did not fire (a hang in C code)
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else (x or "") for x in (exc.stdout, exc.stderr))
        how = f"did not return within {timeout:g} s"
    try:
        replies = [json.loads(line) for line in out.splitlines() if line.strip()]
    except ValueError:
        replies = []
    if not replies or replies[0] != {"ready": True}:
        return None, (err.strip().splitlines() or ["no output"])[-1]
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


if __name__ == "__main__":
    _worker()
