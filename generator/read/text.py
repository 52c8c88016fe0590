"""What every source model shares: strict frozen models, translated text, identifiers and release names."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, RootModel

IDENT = r"^[a-z][a-z0-9_]*$"
RELEASE = r"^\d+\.\d+\.\d+$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Text(RootModel[dict[str, str]]):
    """Human-readable text, one Markdown string per language code: ``{en: ..., zh: ..., vi: ...}``."""

    def get(self, lang: str, fallback: str | None = None) -> str:
        """The text in ``lang``; in ``fallback`` where ``lang`` has none (a language in progress); else ''."""
        return self.root.get(lang) or (self.root.get(fallback, "") if fallback else "")


def walk(value: object, loc: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], object]]:
    """Every (location, value) of a model tree, depth first; Text values are leaves."""
    yield loc, value
    if isinstance(value, Text):
        return
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from walk(getattr(value, name), loc + (name,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk(item, loc + (i,))
    elif isinstance(value, dict):
        for k, item in value.items():
            yield from walk(item, loc + (k,))
