"""What a TRL release's trainer classes look like to a user, read in that release's interpreter: for each
(module, trainer class, config class), the config's fields with the repr of each default (None without one) and the
trainer's ``__init__`` arguments. Standard library only: ``record.py`` calls it in the process that already
imported TRL for the runs; ``python -m tests.conformance.describe '<json list of [module, name, config]>'`` prints
it alone."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import sys
from typing import Any


def _default(f: dataclasses.Field) -> str | None:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return None
    return repr(value.value if isinstance(value, enum.Enum) else value)


def describe(classes: list[tuple[str, str, str]]) -> dict[str, dict[str, Any]]:
    """``{"module.Trainer": {"config": [field, ...], "defaults": {field: repr}, "trainer": [argument, ...]}}``."""
    out = {}
    for module, name, config in classes:
        mod = importlib.import_module(module)
        fields = dataclasses.fields(getattr(mod, config))
        out[f"{module}.{name}"] = {
            "config": [f.name for f in fields],
            "defaults": {f.name: _default(f) for f in fields},
            "trainer": list(inspect.signature(getattr(mod, name).__init__).parameters),
        }
    return out


if __name__ == "__main__":
    print(json.dumps(describe([tuple(c) for c in json.loads(sys.argv[1])])))
