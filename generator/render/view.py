"""The View: everything the pages and sheets of one (edition, language) are rendered with. Made once per pair."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..check.atlas import Atlas
from ..read.config import Config, Language
from ..read.load import Loaded
from ..read.metric import Bounds, RedFlag, SourceRef
from ..read.text import Text
from ..read.translations import Field, field_states
from ..resolve.edition import Edition
from . import paths
from .markdown import join_wide_lines, markdown_text
from .mathref import placeholder
from .rulewords import bounds_words, flag_words
from .termlinks import TermIndex, used_by

CODE_URLS = {  # where each package's tagged source lives; files in SourceRef are paths inside the package
    "trl": "https://github.com/huggingface/trl/blob/v{version}/{file}#L{line}",
    "transformers": "https://github.com/huggingface/transformers/blob/v{version}/src/{file}#L{line}",
    "accelerate": "https://github.com/huggingface/accelerate/blob/v{version}/src/{file}#L{line}",
}
PACKAGE_NAMES = {"trl": "TRL", "transformers": "Transformers", "accelerate": "Accelerate"}


def code_url(ref: SourceRef) -> str:
    return CODE_URLS[ref.package].format(version=ref.version, file=ref.file, line=ref.line)


def package_name(ref: SourceRef) -> str:
    return f"{PACKAGE_NAMES[ref.package]} {ref.version}"


@dataclass(frozen=True)
class View:
    atlas: Atlas
    edition: Edition
    lang: Language

    @property
    def config(self) -> Config:
        return self.atlas.config

    @property
    def default(self) -> Language:
        return self.config.default

    @property
    def line(self) -> Any:
        return self.edition.line

    def t(self, name: str, /, **kw: Any) -> str:
        """UI string ``name`` in this language, formatted with ``kw``."""
        value = self.atlas.ui[self.lang.code][name]
        return value.format(**kw) if kw else value

    def text(self, value: Text | None) -> str:
        """A source text in this language (in the default language where it has none yet), its lines wrapped
        inside a Chinese sentence joined without a space."""
        return "" if value is None else join_wide_lines(value.get(self.lang.code, self.default.code))

    def markdown(self, value: Text | None) -> str:
        """``text(value)`` for a Markdown page (see `markdown_text`): what templates get as ``text``."""
        return markdown_text(self.text(value))

    def bounds(self, b: Bounds | None) -> str:
        return bounds_words(self.t, self.lang, b.min, b.max) if b is not None else self.t("unbounded")

    def flag(self, f: RedFlag, full: bool = True) -> str:
        """A red flag's rule in words (``full``: with its duration or window and its conditions, as `atlas doctor`
        reads it; else the bare test, for the cheat-sheet)."""
        if full:
            return flag_words(self.t, self.lang, f)
        if f.op in ("nan", "rising", "falling"):
            return self.t(f"op_{f.op}")
        return f"`{f.op} {f.value:g}`"

    def math(self, tex: str, display: bool) -> str:
        """A formula on a page: a placeholder that the finished page gets its KaTeX HTML for (see `mathref`)."""
        self.atlas.math[(tex, display)]  # a formula `check` did not render is a bug here, not a blank on a page
        return placeholder(tex, display)

    def math_html(self, tex: str, display: bool) -> str:
        """A formula's KaTeX HTML itself (the cheat-sheets are not built by mkdocs)."""
        return self.atlas.math[(tex, display)]

    def url(self, site_path: str) -> str:
        """Absolute URL of a path inside this line, in this language (``grpo/kl/``)."""
        return f"{paths.line_url(self.config, self.line)}{self.lang.prefix}{site_path}"

    def english_url(self, doc: str) -> str:
        """Root-relative URL of the default-language page built from ``doc``: i18n would turn a relative link into
        this language's page."""
        return f"{paths.line_path(self.config, self.line)}{paths.folder(doc)}"

    def edit_url(self, rel: str) -> str:
        return self.config.edit_base + rel

    @cached_property
    def term_index(self) -> TermIndex:
        """The glossary's terms in this language, for linking them on pages (one index per language, shared by
        every line: the glossary is the same on all)."""
        key = f"terms:{self.lang.code}"
        if key not in self.atlas.memo:
            self.atlas.memo[key] = TermIndex.build([it.model for it in self.edition.glossary], self.lang,
                                                   self.default.code)
        return self.atlas.memo[key]

    @cached_property
    def glossary_users(self) -> dict[str, list[Any]]:
        """For each glossary entry, the metrics of this line whose text in this language uses it (found, not
        hand-listed): exactly the pages that link to the entry."""
        return used_by(self.term_index, [r.metric for r in self.edition.metrics])

    @cached_property
    def terms_of(self) -> dict[int, set[str]]:
        """The ids of the glossary entries each metric of this line uses (`glossary_users` turned around), by the
        metric model's identity: comparing models by value, field by field, took seconds per line."""
        out: dict[int, set[str]] = {}
        for eid, models in self.glossary_users.items():
            for m in models:
                out.setdefault(id(m), set()).add(eid)
        return out

    @cached_property
    def glossary_sorted(self) -> list[Loaded]:
        """The glossary entries in the order of their default-language terms (the same in every language)."""
        return sorted(self.edition.glossary, key=lambda it: it.model.term.get(self.default.code).casefold())

    @cached_property
    def states(self) -> dict[str, list[Field]]:
        """Per source file, its translated fields whose text in this language is missing or stale."""
        if self.lang.default:
            return {}
        stamps = self.atlas.stamps.get(self.lang.code, {})
        return {it.path: [f for f in field_states(it.doc, self.lang.code, self.default.code, stamps)
                          if f.state in ("missing", "stale")] for it in self.atlas.translated}

    def base(self, **kw: Any) -> dict[str, Any]:
        """What every template gets."""
        return dict(t=self.t, text=self.markdown, bounds=self.bounds, flag=self.flag, math=self.math,
                    code_url=code_url, package_name=package_name, version=self.line, lang=self.lang, **kw)
