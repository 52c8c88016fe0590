"""The conformance driver, the same for every trainer: what a recorded run holds, its file format, and the
comparison of a page's snippet with what TRL logged.

A run records its trainer's ``log_history`` plus, per *kind* of record (a dataclass of the trainer package, such as
one generation batch or one optimizer step), every record its probes captured. Each record carries
``log_step = state.global_step + 1`` at capture time: the optimizer step it belongs to. A log entry with
``step == s`` averages the records of the optimizer steps after the previous entry up to ``s`` (``Run.window``); with
``logging_steps=1`` that is exactly ``log_step == s``.

The runs execute in the virtualenv of the TRL release under test (``record.py``), the tests read the file in the
project's own virtualenv. Both import this module, so at import time it needs nothing but ``torch`` and the standard
library (the generator is imported where a comparison needs it).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import os
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch

if TYPE_CHECKING:
    from generator.resolve.variants import Resolved

FORMAT = 3  # bump when the file layout changes (a trainer's record types are checked field by field on loading)
NOT_METRICS = {"step"}  # what HF's Trainer writes into every log entry that is not a metric of its own

R = TypeVar("R")


@dataclass
class Run:
    """One recorded training run of a trainer, in one TRL release."""

    name: str
    trl_version: str
    transformers_version: str
    args: Any  # the config's to_dict() in the file; a SimpleNamespace with the same fields once loaded
    log_history: list[dict[str, Any]]
    trainer: str = ""  # its id (set by record.py)
    records: dict[str, list[Any]] = field(default_factory=dict)  # by record type name, in capture order
    templates: dict[str, list[str]] = field(default_factory=dict)  # `{placeholder}` of a key -> what it stood for
    facts: dict[str, Any] = field(default_factory=dict)  # trainer-specific plain values (e.g. rows of the dataset)
    seconds: float = 0.0

    def add(self, record: Any) -> None:
        self.records.setdefault(type(record).__name__, []).append(record)

    def of(self, kind: type[R]) -> list[R]:
        """Every record of that type, in capture order."""
        return self.records.get(kind.__name__, [])

    def entries(self) -> list[dict[str, Any]]:
        """The per-step training log entries (the final runtime summary left out)."""
        return [e for e in self.log_history if "step" in e and "train_runtime" not in e]

    def window(self, step: int) -> range:
        """The optimizer steps (1-based, as ``log_step``) whose values the log entry ``step`` averages."""
        earlier = [e["step"] for e in self.entries() if e["step"] < step]
        return range((max(earlier) if earlier else 0) + 1, step + 1)

    def within(self, kind: type[R], step: int) -> list[R]:
        """The records of that type that the log entry ``step`` averages."""
        window = self.window(step)
        return [r for r in self.of(kind) if r.log_step in window]


def save_runs(runs: dict[str, Run], path: str | Path) -> None:
    """Write runs as plain containers (loadable with ``weights_only=True``: no pickled classes); the file appears
    whole or not at all."""
    payload = {"format": FORMAT, "runs": {name: dataclasses.asdict(run) for name, run in runs.items()}}
    tmp = f"{path}.{os.getpid()}.tmp"
    torch.save(payload, tmp)
    os.replace(tmp, str(path))


def load_runs(path: str | Path, kinds: Iterable[type]) -> dict[str, Run]:
    """The runs of a file, their records rebuilt as the trainer package's record types ``kinds``."""
    payload = torch.load(str(path), weights_only=True)
    if payload.get("format") != FORMAT:
        raise ValueError(f"{path}: record format {payload.get('format')}, this harness reads {FORMAT}")
    by_name = {k.__name__: k for k in kinds}
    runs = {}
    for name, d in payload["runs"].items():
        unknown = sorted(set(d["records"]) - set(by_name))
        if unknown:
            raise ValueError(f"{path}: run {name} holds records {unknown}, the trainer package knows {sorted(by_name)}")
        records = {kind: [by_name[kind](**r) for r in rs] for kind, rs in d["records"].items()}
        runs[name] = Run(**{**d, "args": types.SimpleNamespace(**d["args"]), "records": records})
    return runs


# --------------------------------------------------------------------------------------------------------------------
# Adapters: how a snippet is fed from a run
# --------------------------------------------------------------------------------------------------------------------

# inputs by snippet parameter, and one logged key or one per element; a key whose logged value is an array (a
# histogram, nested lists once recorded) is compared element by element with the list the snippet returns, flattened
Case = tuple[dict[str, Any], str | list[str]]


@dataclass(frozen=True)
class Adapter:
    """Feeds one metric's snippet from the named runs: ``cases(run, log_entry)`` gives the inputs and the key(s)
    they reproduce. Each snippet receives the inputs its signature names, so two releases' snippets can need
    different inputs and still be fed by one adapter."""

    runs: tuple[str, ...]
    cases: Callable[[Run, dict[str, Any]], list[Case]]
    atol: float = 1e-6  # 0.0 where the snippet reproduces TRL's arithmetic bit for bit


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def logged_keys(metric_key: str, run: Run) -> list[str]:
    """A documented key as the run logs it: each ``{placeholder}`` expanded with what it stood for in the run
    (``run.templates``; a placeholder the run does not know expands to nothing)."""
    names = _PLACEHOLDER.findall(metric_key)
    if not names:
        return [metric_key]
    parts = _PLACEHOLDER.split(metric_key)  # literal, name, literal, name, ..., literal
    keys = []
    for values in itertools.product(*(run.templates.get(n, []) for n in names)):
        keys.append("".join(p if i % 2 == 0 else values[i // 2] for i, p in enumerate(parts)))
    return keys


def where(res: Resolved, name: str = "snippet") -> str:
    """``path:line`` of the field the page of ``res`` takes ``name`` from (its snippet's code, its `checked`)."""
    tail = {"snippet": ("code",), "conformance": ("checked",)}.get(name, ())
    return f"{res.item.path}:{res.item.line(*res.origin[name], *tail)}"


def _fresh(value: Any) -> Any:
    """A copy of the adapter's inputs, so that a snippet working in place cannot change the shared recordings."""
    if hasattr(value, "clone"):
        return value.clone()
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def _flat(value: Any) -> list[Any]:
    """A logged array (nested lists) in row-major order."""
    return [x for v in value for x in _flat(v)] if isinstance(value, list) else [value]


def _compare_array(out: Outcome, at: str, got: Any, logged: list[Any], atol: float) -> None:
    """A histogram key: TRL logged an array (nested lists once recorded), the snippet returns it flattened."""
    values = _flat(logged)
    if not isinstance(got, list) or len(got) != len(values):
        shape = f"{len(got)} values" if isinstance(got, list) else f"one number {got!r}"
        out.errors.append(f"{at}: TRL logged an array of {len(values)} values, the snippet returned {shape}")
        return
    out.compared += len(values)
    bad = [i for i, (g, v) in enumerate(zip(got, values, strict=True)) if not _same(g, v, atol)]
    if bad:
        i = bad[0]
        out.mismatches.append(f"{at}: {len(bad)} of {len(values)} elements differ, e.g. [{i}]: TRL logged "
                              f"{values[i]!r}, snippet returned {got[i]!r} (expected to agree within {atol:g})")


def _same(got: float | None, logged: float | None, atol: float) -> bool:
    if logged is None or (isinstance(logged, float) and math.isnan(logged)):
        return got is None or math.isnan(got)
    if got is None or math.isnan(got):
        return False
    return got == logged if atol == 0 else abs(got - logged) <= atol


@dataclass
class Outcome:
    """A snippet against one release's runs: every value compared, and what stopped a comparison."""

    where: str
    release: str
    compared: int = 0
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def compare(res: Resolved, release: str, adapter: Adapter, runs: dict[str, Run]) -> Outcome:
    """Run the page's snippet (as ``res`` resolves it) on every log entry of every run the adapter uses."""
    from generator.check.snippets import as_floats, compile_function

    snippet = res.metric.snippet
    out = Outcome(where(res), release)
    try:
        fn = compile_function(snippet.code, snippet.function, f"{res.item.path}#snippet")
    except Exception as exc:  # noqa: BLE001 - name the file
        out.errors.append(f"{out.where}: the snippet does not define {snippet.function}: {type(exc).__name__}: {exc}")
        return out
    signature = inspect.signature(fn)
    params = signature.parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for run_name in adapter.runs:
        if run_name not in runs:
            out.errors.append(f"{out.where}: trl {release} has no run '{run_name}' (its adapter names it)")
            continue
        run = runs[run_name]
        keys = logged_keys(res.logged_as, run)
        entries = [e for e in run.entries() if any(k in e for k in keys)]
        if not entries:
            out.errors.append(f"{out.where}: trl {release}, run {run_name} never logged {keys}: nothing to check")
            continue
        for entry in entries:
            for inputs, key_or_keys in adapter.cases(run, entry):
                keys_here = [key_or_keys] if isinstance(key_or_keys, str) else list(key_or_keys)
                if not any(k in entry for k in keys_here):
                    continue
                at = f"trl {release}, run {run_name}, step {entry['step']}"
                kwargs = inputs if takes_any else {k: v for k, v in inputs.items() if k in params}
                try:
                    signature.bind(**kwargs)
                except TypeError as exc:
                    out.errors.append(
                        f"{out.where}: {snippet.function}{signature} cannot be fed by the adapter for "
                        f"trl {release} (it offers {sorted(inputs)}): {exc}"
                    )
                    return out
                try:
                    got: Any = as_floats(fn(**_fresh(kwargs)))
                except Exception as exc:  # noqa: BLE001 - report which step broke the snippet
                    out.errors.append(f"{out.where}: {at}: snippet raised {type(exc).__name__}: {exc}")
                    continue
                if isinstance(key_or_keys, str) and isinstance(entry.get(key_or_keys), list):
                    _compare_array(out, f"{out.where}: {at}: {key_or_keys}", got, entry[key_or_keys], adapter.atol)
                    continue
                if isinstance(key_or_keys, str) and isinstance(got, list):
                    out.errors.append(f"{out.where}: {at}: snippet returned a list {got!r}, TRL logged one number")
                    continue
                if not isinstance(key_or_keys, str) and (not isinstance(got, list) or len(got) != len(keys_here)):
                    out.errors.append(f"{out.where}: {at}: snippet returned {got!r}, expected one per {keys_here}")
                    continue
                values = [got] if isinstance(key_or_keys, str) else got
                for key, value in zip(keys_here, values, strict=True):
                    logged = entry.get(key)
                    out.compared += 1
                    if not _same(value, logged, adapter.atol):
                        diff = abs(value - logged) if value is not None and logged is not None else float("nan")
                        tol = "exactly" if adapter.atol == 0 else f"within {adapter.atol:g}"
                        out.mismatches.append(
                            f"{out.where}: {at}: {key}: TRL logged {logged!r}, snippet returned {value!r} "
                            f"(|diff| {diff:.3g}, expected to agree {tol})"
                        )
    return out
