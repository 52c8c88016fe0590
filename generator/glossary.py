"""The glossary of RL concepts: one ``glossary/<id>.yaml`` per concept, its typed model, loading and checks.

Which metrics use a concept is never written by hand: `termlinks` finds it from the metric texts, through the
surface forms each entry lists per language (`match`)."""

from __future__ import annotations

import re
from pathlib import Path as FsPath
from typing import Any

from pydantic import Field, field_validator

from .config import Config, Term
from .errors import SourceError, did_you_mean
from .load import Loaded, load_files
from .schema import IDENT, Strict, Text
from .yamlsrc import Document

# a short definition becomes a link's title attribute (the tooltip): plain text, one line
_NOT_IN_SHORT = re.compile(r"[`|\"\[\]*\n<>]")


class GlossaryEntry(Strict):
    """One RL concept, in every language."""

    id: str = Field(pattern=IDENT, description="The concept's id; also its file name and its key in the term bases.")
    term: Text = Field(description="The preferred term per language; must equal the term base's `preferred`.")
    short: Text = Field(description="One plain-text line: the tooltip shown where a metric page uses the term.")
    definition: Text = Field(description="The full definition, in Markdown.")
    formula: str | None = Field(None, description="Display formula in TeX (rendered with KaTeX at build time).")
    example: Text | None = Field(None, description="A small worked example a reader can check by hand.")
    match: dict[str, list[str]] = Field(
        {}, description="Surface forms to find in each language's text (default: the term itself). English forms "
                        "also match their plural (+s, +es); Latin forms match whole words only.")
    see_also: list[str] = Field([], description="Other glossary entries, by id.")

    @field_validator("match")
    @classmethod
    def _forms(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for lang, forms in v.items():
            if not forms or any(not f.strip() for f in forms):
                raise ValueError(f"match.{lang}: give at least one non-empty form")
        return v

    def forms(self, lang: str) -> list[str]:
        """What to look for in ``lang`` text: the listed forms, else the term itself."""
        return self.match.get(lang) or [self.term.get(lang)]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a glossary file for editors: `atlas schema --glossary`, committed as glossary/schema.json."""
    schema = GlossaryEntry.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "RL Metrics Atlas glossary entry"
    return schema


def load_glossary(root: FsPath) -> tuple[list[Loaded], list[Document], list[SourceError]]:
    """Every ``glossary/*.yaml`` under ``root`` (none when the folder is absent), like `load.load_metrics`."""
    return load_files(sorted((root / "glossary").glob("*.y*ml")), root, GlossaryEntry)


def _err(item: Loaded, loc: tuple[str | int, ...], field: str, message: str) -> SourceError:
    return SourceError(item.path, item.line(*loc), field, message)


def check_glossary(entries: list[Loaded], docs: list[Document], config: Config,
                   terms: dict[str, dict[str, Term]]) -> list[SourceError]:
    """File names match ids, references resolve, tooltips are plain lines, and each term equals the term base's."""
    errors = []
    ids = sorted(FsPath(doc.path).stem for doc in docs)  # an entry with errors of its own is still known
    for it in entries:
        e: GlossaryEntry = it.model  # type: ignore[assignment]
        if FsPath(it.path).stem != e.id:
            errors.append(_err(it, ("id",), "id", f"the file of entry '{e.id}' must be glossary/{e.id}.yaml"))
        for i, ref in enumerate(e.see_also):
            if ref not in ids or ref == e.id:
                errors.append(_err(it, ("see_also", i), f"see_also[{i}]",
                                   f"unknown glossary entry '{ref}'" + did_you_mean(ref, ids)))
        for lang, text in e.short.root.items():
            if m := _NOT_IN_SHORT.search(text):
                errors.append(_err(it, ("short", lang), f"short.{lang}",
                                   f"a tooltip is one line of plain text (found {m.group(0)!r})"))
        for lang in e.match:
            if lang not in config.lang_codes:
                errors.append(_err(it, ("match", lang), f"match.{lang}",
                                   f"unknown language '{lang}'" + did_you_mean(lang, config.lang_codes)))
        for lang, base in terms.items():
            if not base:
                continue  # a language without a term base (English)
            written = e.term.get(lang, fallback="")
            if e.id not in base:
                errors.append(_err(it, ("term", lang), f"term.{lang}", f"'{e.id}' is missing from "
                                   f"locales/{lang}/terms.yaml (add it with preferred: {written})"))
            elif written and written != base[e.id].preferred:
                errors.append(_err(it, ("term", lang), f"term.{lang}",
                                   f"'{written}' differs from the term base's preferred '{base[e.id].preferred}' "
                                   f"(locales/{lang}/terms.yaml)"))
    return errors
