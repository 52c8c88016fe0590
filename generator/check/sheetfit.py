"""How much text fits a cell of the printed cheat-sheet: shared by the sheet itself and by `atlas check`."""

from __future__ import annotations

import unicodedata

CELL = 90  # a red flag or an action on the sheet: at most three lines of its column


def width(text: str) -> int:
    """Printed width in Latin-letter units: a CJK character counts twice; code-span backticks do not print."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text.replace("`", ""))
