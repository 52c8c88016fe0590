"""Rules on cheat-sheet entries: distinct positions on a trainer's sheet, a reading-order strip in the trainer's
file, and a written `first_try` that fits its cell in every language."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SourceError
from ..read.load import Loaded
from ..resolve.variants import each
from .sheetfit import CELL, width
from .text import err


def check_sheets(metrics: Sequence[Loaded], trainers: dict[str, Loaded]) -> list[SourceError]:
    errors = []
    seen: dict[tuple[str, int], Loaded] = {}
    for item in sorted(metrics, key=lambda it: it.path):
        for loc, entry, _ in each(item.model, "cheatsheet"):
            for lang, text in sorted(entry.first_try.root.items()) if entry and entry.first_try else []:
                if (cols := width(text)) > CELL:
                    errors.append(err(item.doc, loc + ("first_try", lang),
                                      f"{cols} columns; at most {CELL} fit the sheet's 'first thing to try' cell"))
        entry = item.model.cheatsheet
        if entry is None:
            continue
        where = (item.model.trainer, entry.order)
        if (first := seen.get(where)) is not None:
            errors.append(err(item.doc, ("cheatsheet", "order"),
                              f"cheat-sheet position {entry.order} is taken (also in {first.path})"))
        seen.setdefault(where, item)
    for trainer_id in sorted({t for t, _ in seen}):
        trainer = trainers.get(trainer_id)
        if trainer is not None and trainer.model.strip is None:
            errors.append(err(trainer.doc, ("strip",),
                              f"the {trainer_id} cheat-sheet needs its 'read the curves in this order' strip"))
    return errors
