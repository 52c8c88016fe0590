"""Project configuration (atlas.yml) and locale files, as typed models."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path as FsPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import SourceError, SourceErrors, did_you_mean
from .load import read_optional, read_required, validate_model


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Language(_Strict):
    code: str = Field(pattern=r"^[a-z]{2}(-[A-Za-z]+)?$")
    name: str
    status: Literal["complete", "in_progress"]
    default: bool = False


class Version(_Strict):
    name: str = Field(pattern=r"^\d+\.\d+$")
    trl: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    covers: tuple[str, str | None]
    trainers: list[str]


class Trainer(_Strict):
    class_: str = Field(alias="class")
    categories: list[str]


class Config(_Strict):
    site_name: str
    site_url: str
    edit_base: str
    languages: list[Language]
    versions: list[Version] = Field(min_length=1)
    trainers: dict[str, Trainer]
    trl_releases: list[str] = Field(min_length=1)

    @property
    def latest(self) -> Version:
        return self.versions[0]

    @property
    def lang_codes(self) -> list[str]:
        return [lang.code for lang in self.languages]

    @property
    def complete_langs(self) -> list[str]:
        return [lang.code for lang in self.languages if lang.status == "complete"]

    @property
    def default_lang(self) -> str:
        return next(lang.code for lang in self.languages if lang.default)


class Term(_Strict):
    preferred: str
    forbidden: dict[str, str] = {}
    alternatives: dict[str, str] = Field(
        {}, description="Synonyms that are not wrong but not ours: `atlas check` asks for `preferred` instead.")
    note: str | None = None


def _load(path: FsPath, root: FsPath, model: type[BaseModel]) -> BaseModel:
    doc = read_required(path, root)
    value, errors = validate_model(doc, model)
    if errors:
        raise SourceErrors(errors)
    return value  # type: ignore[return-value]


def load_config(root: FsPath) -> Config:
    return _load(root / "atlas.yml", root, Config)  # type: ignore[return-value]


class _TermBase(BaseModel):
    model_config = ConfigDict(frozen=True)
    terms: dict[str, Term]


def load_terms(root: FsPath, lang: str) -> dict[str, Term]:
    """The term base of ``lang`` (empty for a language without one)."""
    doc = read_optional(root / "locales" / lang / "terms.yaml", root)
    if doc is None:
        return {}
    doc.data = {"terms": doc.data}
    doc.lines = {("terms",) + k: v for k, v in doc.lines.items()}
    value, errors = validate_model(doc, _TermBase)
    if errors:  # report fields as the file spells them, without the wrapper's name
        raise SourceErrors([replace(e, field=e.field.removeprefix("terms.").removeprefix("terms")) for e in errors])
    return value.terms  # type: ignore[union-attr]


def load_ui(root: FsPath, lang: str, required: bool = True, known: list[str] | None = None) -> dict[str, str]:
    """Flat UI strings of ``lang`` from ``locales/<lang>/ui.yaml`` (a language in progress may have none yet);
    with ``known`` (the default language's names), a name outside it is reported as a typo."""
    path = root / "locales" / lang / "ui.yaml"
    doc = read_required(path, root) if required else read_optional(path, root)
    if doc is None:
        return {}
    rel, errors = doc.path, []
    for name, value in doc.data.items():
        line = doc.line_of((name,))
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            errors.append(SourceError(rel, line, str(name), "a UI string must be text"))
        elif known is not None and name not in known:
            errors.append(
                SourceError(rel, line, str(name), f"unknown UI string '{name}'" + did_you_mean(str(name), known))
            )
    if errors:
        raise SourceErrors(errors)
    return {str(k): str(v) for k, v in doc.data.items()}
