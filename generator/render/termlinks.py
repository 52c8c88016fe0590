"""Glossary terms in rendered Markdown: find them, and link the first use of each per section to its entry, with
the entry's short definition (in the page's language) as the link title, which Material shows as a tooltip.

Done on the generated Markdown, never inside front matter, headings, admonition titles, fenced or inline code,
existing links, raw HTML (KaTeX) or attribute lists. Works for unspaced Chinese, where `abbr` cannot."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..read.config import Language
from ..read.glossary import GlossaryEntry
from ..read.text import Text, walk

# Things never to touch: inline code, links and images, raw HTML from the first '<' to the last '>' of a line (KaTeX
# spans), bare URLs, attribute lists such as `{ #formula }`.
_PROTECTED = re.compile(r"`[^`\n]*`|!?\[[^\]\n]*\]\([^)\n]*\)(?:\{[^}\n]*\})?|<.*>|https?://\S+|\{[^}\n]*\}")
_CODE = re.compile(r"`[^`]*`")
_LATIN_EDGE = re.compile(r"[^\W\u2e80-\u9fff\uf900-\ufaff]")  # a word character outside the CJK blocks


def _alternation(forms: list[tuple[str, str]], lang: Language) -> str:
    """One regular expression for ``forms`` (surface form, group name; earlier wins among equal forms), matching the
    longest form at each place, as a trie: at every character the engine tries only the forms that begin with what it
    has read so far (an alternation of every form took 13 times longer on the sites' texts). An empty group named
    after the form closes each match, so `Match.lastgroup` says which form it was."""
    trie: dict[str, Any] = {}
    for form, name in forms:
        node = trie
        for ch in form.lower():
            node = node.setdefault(ch, {})
        node.setdefault("", (form, name))
    plural = "|".join(re.escape(p) for p in sorted(lang.plurals, key=len, reverse=True))

    def branch(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + branch(child) for ch, child in node.items() if ch]  # longer forms first
        if "" in node:
            form, name = node[""]
            ending = f"(?:{plural})?" if plural and form[-1].isalpha() else ""  # advantage(s), process(es)
            edge = r"(?![\w-])" if _LATIN_EDGE.match(form[-1]) else ""
            alts.append(f"{ending}{edge}(?P<{name}>)")
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return "|".join((r"(?<![\w-])" if _LATIN_EDGE.match(ch) else "") + re.escape(ch) + branch(child)
                    for ch, child in trie.items())


@dataclass(frozen=True)
class TermIndex:
    """The glossary's surface forms in one language, as one regular expression (longest forms first)."""

    lang: str  # its code
    entries: tuple[GlossaryEntry, ...]
    regex: re.Pattern[str] | None
    fallback: str = ""  # the language whose texts stand in where ``lang`` has none yet
    # what `found` answered, by text: the lines of a site share most of their texts
    _found: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, entries: Iterable[GlossaryEntry], lang: Language, fallback: str) -> TermIndex:
        entries = tuple(entries)
        forms = sorted(((f, i) for i, e in enumerate(entries) for f in e.forms(lang.code, fallback)),
                       key=lambda p: -len(p[0]))
        if not forms:
            return cls(lang.code, entries, None, fallback)
        alternation = _alternation([(f, f"t{i}_{k}") for k, (f, i) in enumerate(forms)], lang)
        return cls(lang.code, entries, re.compile(alternation, re.IGNORECASE), fallback)

    def entry(self, m: re.Match[str]) -> GlossaryEntry:
        return self.entries[int(m.lastgroup.split("_")[0][1:])]  # type: ignore[union-attr]

    def found(self, text: str) -> frozenset[str]:
        """Ids of the entries whose forms occur in ``text`` (prose only: inline code is ignored)."""
        if self.regex is None:
            return frozenset()
        if text not in self._found:
            self._found[text] = frozenset(self.entry(m).id for m in self.regex.finditer(_CODE.sub(" ", text)))
        return self._found[text]


def _link_line(line: str, index: TermIndex, seen: set[str], href: Callable[[GlossaryEntry], str]) -> str:
    def sub(m: re.Match[str]) -> str:
        e = index.entry(m)
        if e.id in seen:
            return m.group(0)
        seen.add(e.id)
        return f'[{m.group(0)}]({href(e)} "{e.short.get(index.lang, index.fallback)}"){{ .atlas-term }}'

    out, pos = [], 0
    for p in _PROTECTED.finditer(line):
        out.append(index.regex.sub(sub, line[pos:p.start()]))  # type: ignore[union-attr]
        out.append(p.group(0))
        pos = p.end()
    out.append(index.regex.sub(sub, line[pos:]))  # type: ignore[union-attr]
    return "".join(out)


_ANCHOR = re.compile(r"\{\s*#([\w-]+)\s*\}\s*$")


def link_terms(markdown: str, index: TermIndex, href: Callable[[GlossaryEntry], str],
               skip: Iterable[str] = (), skip_sections: Iterable[str] = ()) -> str:
    """``markdown`` with the first use of each glossary term per section (between headings) linked to its entry.
    Entries in ``skip`` (a glossary page's own) are never linked, nor anything in the sections whose heading
    anchors (``## Title { #anchor }``) are in ``skip_sections``."""
    if index.regex is None:
        return markdown
    lines = markdown.split("\n")
    seen: set[str] = set(skip)
    fence: str | None = None
    quiet = False  # inside a skipped section
    start = 0
    if lines and lines[0] == "---":  # front matter
        start = next((i + 1 for i in range(1, len(lines)) if lines[i] == "---"), len(lines))
    for i in range(start, len(lines)):
        stripped = lines[i].lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if stripped.startswith("#"):
            seen = set(skip)  # a new section
            quiet = bool((m := _ANCHOR.search(stripped)) and m.group(1) in skip_sections)
            continue
        if quiet or stripped.startswith(("!!!", "???")):
            continue
        lines[i] = _link_line(lines[i], index, seen, href)
    return "\n".join(lines)


def texts_of(model: Any, lang: str) -> Iterable[str]:
    """Every text of a model in ``lang``."""
    for _, value in walk(model):
        if isinstance(value, Text) and (s := value.root.get(lang)):
            yield s


def used_by(index: TermIndex, models: list[Any]) -> dict[str, list[Any]]:
    """For each entry id, the models (metrics) whose text in the index's language mentions it, in the given
    order."""
    out: dict[str, list[Any]] = {e.id: [] for e in index.entries}
    for model in models:  # text by text: most texts are the same on every line, and `found` remembers them
        for eid in sorted(frozenset().union(*(index.found(text) for text in texts_of(model, index.lang)))):
            out[eid].append(model)
    return out
