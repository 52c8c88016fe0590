"""What a TRL release's classes look like to a user: for every trainer class that the site lines of that release
name, the fields of its config class with the repr of each default (None without one) and the arguments of the
trainer class (``describe.py``). Read once per test session and release, by the process that records the release's
runs (importing TRL and its trainers takes tens of seconds), and shared by every pytest-xdist worker through a
file."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from generator.read.trainer import TrainerClass

from ..shared import once
from .cases import trainer_lines
from .envs import run_module

ReleaseApi = Callable[[str, TrainerClass], dict[str, Any]]

API_FILE = "api.json"


def classes_of(release: str) -> list[tuple[str, str, str]]:
    """(module, trainer class, config class) of every trainer that a site line of ``release`` shows."""
    return sorted({(tl.te.cls.module, tl.te.cls.name, tl.te.cls.config) for tl in trainer_lines()
                   if tl.release == release})


def release_api_of(factory: pytest.TempPathFactory, recorded_with: Callable[[str], Path | None]) -> ReleaseApi:
    """``api(release, cls)``: the class's config fields, defaults and trainer arguments in that release, from the
    folder of the release's recordings when the session records it (``recorded_with(release)``, which waits for
    it), else read alone in the release's interpreter."""

    @cache
    def of_release(release: str) -> dict[str, dict[str, Any]]:
        folder = recorded_with(release)
        if folder is None or not (folder / API_FILE).exists():
            def make(folder):
                folder.mkdir(parents=True)
                (folder / API_FILE).write_text(run_module(release, "tests.conformance.describe",
                                                          json.dumps(classes_of(release))), encoding="utf-8")

            folder = once(factory, f"api-trl-{release}", make)
        return json.loads((folder / API_FILE).read_text(encoding="utf-8"))

    return lambda release, cls: of_release(release)[f"{cls.module}.{cls.name}"]
