"""Rules on trainer files: one per folder of metrics, named by it, with distinct categories, and a trainer exists
before any of its keys is logged."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from ..errors import SourceError
from ..read.load import Loaded
from ..resolve.releases import release_key
from .text import err


def check_trainers(trainers: dict[str, Loaded], metrics: Sequence[Loaded]) -> list[SourceError]:
    """``trainers``: the valid trainer files by folder."""
    errors = []
    for item in trainers.values():
        t = item.model
        folder = PurePosixPath(item.path).parent.name
        if t.id != folder:
            errors.append(err(item.doc, ("id",), f"the trainer of metrics/{folder}/ must have id '{folder}'"))
        seen: dict[str, int] = {}
        for i, c in enumerate(t.categories):
            if c.id in seen:
                errors.append(err(item.doc, ("categories", i, "id"),
                                  f"duplicate category '{c.id}' (also categories[{seen[c.id]}])"))
            seen.setdefault(c.id, i)
    for item in metrics:
        m = item.model
        trainer = trainers.get(m.trainer)
        if trainer is None:
            continue
        t = trainer.model
        if release_key(m.since) < release_key(t.since):
            errors.append(err(item.doc, ("since",), f"since {m.since} is before {trainer.path} has the trainer "
                                                    f"(from {t.since})"))
        if t.until is not None and (m.until is None or release_key(m.until) > release_key(t.until)):
            errors.append(err(item.doc, ("until",), f"until {m.until or '(open)'} is after {trainer.path} removes "
                                                    f"the trainer (in {t.until})"))
    return errors
