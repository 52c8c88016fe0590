"""What checking hands to rendering: the sources, one edition per release line and the KaTeX HTML of every
formula, all known to be valid. Rendering never reads YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..read.config import Config, Term
from ..read.load import Loaded
from ..read.sources import Sources
from ..read.translations import Stamps
from ..resolve.edition import Edition


@dataclass(frozen=True)
class Atlas:
    sources: Sources
    editions: tuple[Edition, ...]  # newest line first
    math: dict[tuple[str, bool], str]  # (TeX, display) -> KaTeX HTML
    # what rendering derives once for all lines (a language's glossary term index), by name
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def root(self) -> Path:
        return self.sources.root

    @property
    def config(self) -> Config:
        return self.sources.config

    @property
    def ui(self) -> dict[str, dict[str, str]]:
        return self.sources.ui

    @property
    def terms(self) -> dict[str, dict[str, Term]]:
        return self.sources.terms

    @property
    def stamps(self) -> dict[str, Stamps]:
        return self.sources.stamps

    @property
    def translated(self) -> tuple[Loaded, ...]:
        return self.sources.translated

    def edition(self, line: str) -> Edition:
        return next(e for e in self.editions if e.line.name == line)

    def editions_with(self, trainer_id: str) -> list[Edition]:
        """The editions whose line shows the trainer, newest first."""
        return [e for e in self.editions if any(t.id == trainer_id for t in e.trainers)]
