"""The project configuration (atlas.yml) and the locale files (UI strings, term bases), as typed models.

`Language` is the one home of every per-language rule: its folder in the site, its file suffix in the generated
docs, how it writes numbers, whether search folds its accents, which plural endings its terms take."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path as FsPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import BuildError, SourceError, SourceErrors, did_you_mean
from .load import read_optional, read_required, validate_model
from .text import RELEASE, Strict


class Language(Strict):
    code: str = Field(pattern=r"^[a-z]{2}(-[A-Za-z]+)?$")
    name: str
    status: Literal["complete", "in_progress"] = Field(
        description="complete: a missing translation is an error; in_progress: it falls back to the default "
                    "language with a notice.")
    default: bool = False
    decimal: Literal[".", ","] = Field(".", description="The decimal separator of numbers on its pages.")
    plurals: list[str] = Field([], description="Endings a glossary term may take in its texts (English: s, es).")
    search_letters: dict[str, str] = Field(
        {}, description="Letters a reader types for others that no diacritic folding reaches, each with the letters "
                        "it may stand for at the start of a word (Vietnamese: d for đ). Search tries each reading.")

    @property
    def prefix(self) -> str:
        """Its folder inside a version of the site: '' for the default language, else ``<code>/``."""
        return "" if self.default else f"{self.code}/"

    @property
    def suffix(self) -> str:
        """Its suffix in generated Markdown file names (mkdocs-static-i18n): '' or ``.<code>``."""
        return "" if self.default else f".{self.code}"

    def number(self, x: float) -> str:
        s = f"{x:g}"
        return s.replace(".", self.decimal) if self.decimal != "." else s

    def interval(self, lo: float, hi: float) -> str:
        """``[lo, hi]``; where the comma is the decimal separator, the bounds are parted by a semicolon."""
        sep = "; " if self.decimal == "," else ", "
        return f"[{self.number(lo)}{sep}{self.number(hi)}]"


class Line(Strict):
    """A TRL release line of the site: pages exact for release ``trl``, read by users of the releases ``covers``."""

    name: str = Field(pattern=r"^\d+\.\d+$")
    trl: str = Field(pattern=RELEASE)
    covers: tuple[str, str | None]


class Config(Strict):
    site_name: str
    site_url: str
    edit_base: str
    source_base: str
    languages: list[Language] = Field(min_length=1)
    versions: list[Line] = Field(min_length=1)
    trl_releases: list[str] = Field(min_length=1)

    @property
    def latest(self) -> Line:
        return self.versions[0]

    @property
    def lang_codes(self) -> list[str]:
        return [lang.code for lang in self.languages]

    @property
    def complete_langs(self) -> list[str]:
        return [lang.code for lang in self.languages if lang.status == "complete"]

    @property
    def default(self) -> Language:
        return next(lang for lang in self.languages if lang.default)

    @property
    def default_lang(self) -> str:
        return self.default.code

    @property
    def translations(self) -> list[Language]:
        """Every language but the default one."""
        return [lang for lang in self.languages if not lang.default]

    def language(self, code: str) -> Language:
        return next(lang for lang in self.languages if lang.code == code)

    def select_languages(self, codes: list[str] | None) -> list[Language]:
        """The languages named (all of them when ``codes`` is empty); `BuildError` for a code no language has."""
        for code in codes or []:
            if code not in self.lang_codes:
                raise BuildError(f"--lang {code}: no such language (languages: {', '.join(self.lang_codes)})"
                                 + did_you_mean(code, self.lang_codes))
        return [lang for lang in self.languages if not codes or lang.code in codes]


class Term(Strict):
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
    config: Config = _load(root / "atlas.yml", root, Config)  # type: ignore[assignment]
    defaults = [lang.code for lang in config.languages if lang.default]
    if len(defaults) != 1:
        doc = read_required(root / "atlas.yml", root)
        raise SourceErrors([SourceError("atlas.yml", doc.line_of(("languages",)), "languages",
                                        f"exactly one language must be the default (found {len(defaults)})")])
    return config


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
