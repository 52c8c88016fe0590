"""The trainer packages: one folder per trainer, named by the trainer's id (its folder in ``metrics/``), found by
looking, so that adding a trainer needs no edit of the driver. What a package provides is stated in
``trainers/grpo/__init__.py``; ``package()`` checks that it provides it."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent

# name -> what it must be (checked by `package`)
INTERFACE = {
    "RECORDS": "a tuple of the record dataclasses its probes capture",
    "runs_for": "runs_for(release) -> the names of the runs recorded for that TRL release",
    "run": "run(name, workdir) -> driver.Run, executed with the interpreter of the release under test",
    "ADAPTERS": "{release: {metric id: driver.Adapter}}",
    "TOLD_APART": "{older release: {metric id: why its snippet differs from the latest release's}}",
}


def trainer_ids() -> list[str]:
    """Every trainer with a package here, sorted."""
    return sorted(p.parent.name for p in HERE.glob("*/__init__.py"))


@cache
def package(trainer_id: str) -> ModuleType:
    """The trainer's package, imported; `TypeError` naming what it lacks."""
    module = importlib.import_module(f"{__name__}.{trainer_id}")
    missing = [f"{name} ({what})" for name, what in INTERFACE.items() if not hasattr(module, name)]
    if missing:
        raise TypeError(f"{module.__file__}: a trainer package must provide " + "; ".join(missing))
    return module
