"""Run reference snippets on their worked examples, in a child process with a time limit per snippet."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import math
import os
import signal
import subprocess
import sys
from typing import Any

from . import cache as _cache
from .cache import Cache
from .errors import SourceError
from .load import Loaded
from .schema import Example, Tensor
from .yamlsrc import dotted

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


def compile_function(code: str, function: str, filename: str) -> Any:
    """Execute the snippet's code in a fresh namespace and return its function."""
    namespace: dict[str, Any] = {"__name__": "snippet"}
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - snippets are our own reviewed sources
    return namespace[function]


def as_floats(value: Any) -> float | list[float | None] | None:
    """A snippet's result as plain floats (a tensor, a float, or a list of them)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().tolist()
    if isinstance(value, (list, tuple)):
        return [None if v is None else float(v) for v in value]
    if value is None:
        return None
    return float(value)


def mismatch(got: Any, expected: float | list[float] | None, atol: float) -> str | None:
    """Why ``got`` differs from ``expected`` (None when it matches within ``atol``)."""

    def close(a: float | None, b: float | None) -> bool:
        if b is None or (isinstance(b, float) and math.isnan(b)):
            return a is None or math.isnan(a)
        return a is not None and not math.isnan(a) and abs(a - b) <= atol + 1e-9 * abs(b)

    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"returned {got!r}, expected a list of {len(expected)} values {expected!r}"
        bad = [i for i, (a, b) in enumerate(zip(got, expected)) if not close(a, b)]
        return f"returned {got!r}, expected {expected!r} (atol {atol:g})" if bad else None
    if isinstance(got, list):
        return f"returned a list {got!r}, expected one number {expected!r}"
    return None if close(got, expected) else f"returned {got!r}, expected {expected!r} (atol {atol:g})"


def _run_job(job: dict[str, Any]) -> dict[str, Any]:
    from .schema import Example as Ex

    example = Ex.model_validate(job["example"])
    try:
        fn = compile_function(job["code"], job["function"], job["filename"])
        got = as_floats(fn(**materialize(example, job.get("device", "cpu"))))
    except _Timeout:
        return {"error": f"did not return within {job['timeout']} s"}
    except Exception as exc:  # noqa: BLE001 - any failure of a snippet is reported, not raised
        tb = exc.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == job["filename"]:
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f" (snippet line {line})" if line else ""
        return {"error": f"raised {type(exc).__name__}: {exc}{where}".replace("\n", " ")}
    problem = mismatch(got, example.expected, example.atol)
    return {"error": problem} if problem else {"value": got}


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _worker() -> None:
    import torch  # noqa: F401 - imported before any time limit is armed: a cold import takes seconds

    jobs = json.load(sys.stdin)
    signal.signal(signal.SIGALRM, _alarm)
    results = []
    for job in jobs:
        signal.setitimer(signal.ITIMER_REAL, job["timeout"])
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a print() in a snippet must not corrupt the reply
                results.append(_run_job(job))
        except _Timeout:
            results.append({"error": f"did not return within {job['timeout']} s"})
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    json.dump(results, sys.stdout)


TIMEOUT_S = 10.0  # per snippet; a worked example is a handful of numbers, so anything slower is a bug


def check_snippets(items: list[Loaded], timeout: float | None = None, cache: Cache | None = None) -> list[SourceError]:
    """Run every snippet on its example (CPU) in one child process; one error per failing snippet.
    Snippets whose code and example passed before (same torch) are not run again."""
    cache = cache or Cache(None)
    timeout = TIMEOUT_S if timeout is None else timeout
    torch_version = importlib.metadata.version("torch")
    todo, jobs, keys = [], [], []
    for it in items:
        for loc, snip in snippets_of(it.model):
            example = snip.example.model_dump()  # python mode keeps NaN (json.dumps writes NaN)
            k = _cache.key("snippet", snip.code, snip.function, example, torch_version)
            if cache.get(k) is not None:
                continue
            todo.append((it, loc))
            keys.append(k)
            jobs.append({"code": snip.code, "function": snip.function,
                         "filename": f"{it.path}#{'.'.join(map(str, loc))}", "example": example, "timeout": timeout})
    if not jobs:
        return []
    env = dict(os.environ, PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "generator.snippets"],
            input=json.dumps(jobs), capture_output=True, text=True, env=env,
            timeout=timeout * len(jobs) + 60, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        results = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        results = None
    if results is None:
        return [SourceError(todo[0][0].path, 1, "snippet", "the snippet runner crashed; run the snippets one by one")]
    errors = []
    for (it, prefix), k, res in zip(todo, keys, results):
        if "error" not in res:
            cache.put(k, res["value"])
        else:
            loc = prefix + (("example", "expected") if res["error"].startswith("returned") else ("code",))
            errors.append(SourceError(it.path, it.doc.line_of(loc), dotted(loc), res["error"]))
    return errors


def snippets_of(m: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    """The page's snippet and every variant's own snippet, with their locations in the file."""
    out = [(("snippet",), m.snippet)]
    out += [(("variants", i, "snippet"), var.snippet) for i, var in enumerate(m.variants) if var.snippet is not None]
    return out


if __name__ == "__main__":
    _worker()
