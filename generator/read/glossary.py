"""The typed contract of ``glossary/<id>.yaml``: one RL concept, in every language.

Which metrics use a concept is never written by hand: pages find it from the metric texts, through the surface
forms each entry lists per language (`match`)."""

from __future__ import annotations

from pydantic import Field, field_validator

from .text import IDENT, Strict, Text


class GlossaryEntry(Strict):
    """One RL concept, in every language."""

    id: str = Field(pattern=IDENT, description="The concept's id; also its file name and its key in the term bases.")
    term: Text = Field(description="The preferred term per language; must equal the term base's `preferred`.")
    short: Text = Field(description="One plain-text line: the tooltip shown where a metric page uses the term.")
    definition: Text = Field(description="The full definition, in Markdown.")
    formula: str | None = Field(None, description="Display formula in TeX (rendered with KaTeX at build time).")
    example: Text | None = Field(None, description="A small worked example a reader can check by hand.")
    match: dict[str, list[str]] = Field(
        {}, description="Surface forms to find in each language's text (default: the term itself). In a language "
                        "with `plurals` (atlas.yml), forms also match with those endings (English: +s, +es); Latin "
                        "forms match whole words only.")
    see_also: list[str] = Field([], description="Other glossary entries, by id.")

    @field_validator("match")
    @classmethod
    def _forms(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for lang, forms in v.items():
            if not forms or any(not f.strip() for f in forms):
                raise ValueError(f"match.{lang}: give at least one non-empty form")
        return v

    def forms(self, lang: str, fallback: str) -> list[str]:
        """What to look for in ``lang`` text: the listed forms, else the term itself (in ``fallback`` if
        ``lang`` has none yet)."""
        return self.match.get(lang) or [self.term.get(lang, fallback)]
