"""The real report that the "Check my run" page shows: `atlas doctor` on the run kept in ``examples/doctor/``,
in the page's language, evaluated with the rule book of the atlas being built."""

from __future__ import annotations

from typing import Any

from ..check.atlas import Atlas
from .evaluate import diagnose
from .readers import read_history
from .report import terminal
from .rulebook import compile_book

PAGE_WIDTH = 80  # what a code block of a page shows without scrolling
EXAMPLES = "examples/doctor"  # one folder per example run, each with its trainer_state.json


def doctor_example(atlas: Atlas, lang: str) -> dict[str, Any] | None:
    """The report on the first example run in ``lang``, with the release and step count of the run (None: no
    example run in the checkout)."""
    files = sorted((atlas.root / EXAMPLES).glob("*/trainer_state.json"))
    if not files:
        return None
    if "doctor:example" not in atlas.memo:
        book = compile_book(atlas.config, atlas.editions, atlas.ui)
        history = read_history(files[0])
        history.source = files[0].relative_to(atlas.root).as_posix()
        atlas.memo["doctor:example"] = (book, diagnose(book, history))
    book, d = atlas.memo["doctor:example"]
    return {"text": terminal(d, book, lang, width=PAGE_WIDTH), "trl": d.line["trl"], "steps": int(d.history.steps[-1])}
