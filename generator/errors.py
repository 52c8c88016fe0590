"""The one error type for bad sources, printed as ``path:line: field: message``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class SourceError:
    """A problem in a source file, located by path, line and dotted field."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        field = f" {self.field}:" if self.field else ""
        return f"{self.path}:{self.line}:{field} {self.message}"


class SourceErrors(Exception):
    """Raised with every error found in one run, sorted by path and line."""

    def __init__(self, errors: list[SourceError]):
        self.errors = sorted(set(errors))
        super().__init__("\n".join(str(e) for e in self.errors))


def did_you_mean(name: str, choices: list[str]) -> str:
    """A ``did you mean 'x'?`` suffix for the closest choice, or an empty string."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class BuildError(Exception):
    """A build step that cannot complete for a reason the sources can fix; printed as its one-line message."""
