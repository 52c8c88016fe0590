"""TRL release names, their order, and the site's release lines: the one sort key and the one line selection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.version import Version

from ..errors import BuildError, did_you_mean

if TYPE_CHECKING:  # annotations only: `atlas doctor` sorts releases without loading the source models
    from ..read.config import Config, Line


def release_key(release: str) -> Version:
    return Version(release)


def in_range(release: str, start: str, end: str | None) -> bool:
    """``release`` lies in [start, end); ``end`` None is open."""
    return release_key(start) <= release_key(release) and (end is None or release_key(release) < release_key(end))


def line_for(config: Config, release: str) -> Line:
    """The line whose `covers` range holds ``release`` (releases before every range: the oldest line)."""
    return next((line for line in config.versions if in_range(release, *line.covers)), config.versions[-1])


def select_lines(config: Config, names: list[str] | None) -> list[Line]:
    """The lines named (all of them when ``names`` is empty), newest first; `BuildError` for a name no line has."""
    known = [line.name for line in config.versions]
    for name in names or []:
        if name not in known:
            raise BuildError(f"--version {name}: no such TRL release line (lines: {', '.join(known)})"
                             + did_you_mean(name, known))
    return [line for line in config.versions if not names or line.name in names]
