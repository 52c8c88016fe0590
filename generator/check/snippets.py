"""What a reference snippet means: its example's inputs as tensors, its function compiled, its result read as numbers
and compared with the expected value, and a failure put in one line. `snippet_runs` runs them in child processes;
the tests and the conformance checks call these directly."""

from __future__ import annotations

import math
import re
from typing import Any

from ..read.metric import Example, Tensor

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


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """``{"value": ...}``, or ``{"error": ..., "at": "code" | "expected"}`` (the field the error line names)."""
    example = Example.model_validate(job["example"])
    try:
        fn = compile_function(job["code"], job["function"], job["filename"])
        got = as_floats(fn(**materialize(example, job.get("device", "cpu"))))
    except OutOfTime:
        raise
    except WrongResult as exc:
        return {"error": str(exc), "at": "code"}
    except BaseException as exc:  # noqa: BLE001 - any failure of a snippet is reported, even SystemExit
        return {"error": _raised(exc, job["filename"]), "at": "code"}
    if problem := shape_problem(got, example.expected):
        return {"error": problem, "at": "code"}
    problem = mismatch(got, example.expected, example.atol)
    return {"error": problem, "at": "expected"} if problem else {"value": got}


class OutOfTime(BaseException):  # not an Exception: a snippet's `except Exception` must not swallow it
    pass
