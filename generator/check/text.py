"""Rules on every text of every source: translations present, no markup or script that would reach a page, and
the term bases (forbidden terms and synonyms)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import SourceError, did_you_mean
from ..read.config import Config, Term
from ..read.load import Loaded
from ..read.text import walk
from ..read.translations import texts
from ..read.yamlsrc import Document, Path, dotted

# a tag starts right after '<' (so prose such as "length < cap" or "a<b" without a closing '>' is fine)
_HTML = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--|<\?|<script|&#?\w+;", re.I)
_JS_URL = re.compile(r"(?i)\b(javascript|vbscript|data)\s*:")
_CODE = re.compile(r"`[^`]*`")
# numbers in running text follow the language's `decimal`: with the decimal point, '0,05', '[0; 0.05]' and
# 'nanmean(0.5; 1.0)' are the other convention leaking in (a thousands group such as 10,000 is allowed)
_COMMA_DECIMAL = re.compile(r"(?<![\w.,])(?![1-9]\d{0,2}(?:,\d{3})+(?!\d|,\d))\d+,\d+(?!\d|,\d)|\d\{,\}\d")
_SEMICOLON_LIST = re.compile(r"[\[(]\s*[−-]?\d[\d.,]*(?:\s*;\s*[−-]?\d[\d.,]*)+\s*[\])]")
_POINT_DECIMAL = re.compile(r"(?<![\w.,])\d+\.\d+(?![\w]|\.\d)")
# Markdown attribute lists (`{: onclick=...}`, `{#id .class}`) would set attributes on the page's elements
_ATTR_LIST = re.compile(r"\{[:#.][^{}]*\}|\{[^{}]*=[^{}]*\}")
# plain-string fields shown inside `code` on the pages: a backtick would end the code span
_CODE_SPAN_FIELDS = {"name", "default", "reduction", "file", "key", "logged_as", "library", "option", "value",
                     "module", "config"}


def err(doc: Document, loc: Path, message: str) -> SourceError:
    return SourceError(doc.path, doc.line_of(loc), dotted(loc), message)


def check_texts(docs: Sequence[Document], config: Config, terms: dict[str, dict[str, Term]]) -> list[SourceError]:
    """Translations present, no HTML or script URLs, no forbidden terms, in every text of the parsed files."""
    named = {lang: _any_term(base) for lang, base in terms.items()}  # once for all files
    return [e for doc in docs for e in _check_doc_texts(doc, config, terms, named)]


def _check_doc_texts(doc: Document, config: Config, terms: dict[str, dict[str, Term]],
                     named: dict[str, re.Pattern[str] | None]) -> list[SourceError]:
    errors = []
    for loc, text in texts(doc.data, config.default_lang):
        for lang in config.complete_langs:
            if not isinstance(text.get(lang), str) or not text[lang].strip():
                # the line of the translation if its key is there (empty), else of the text it belongs to
                line = doc.line_of(loc + (lang,)) if lang in text else doc.line_of(loc)
                errors.append(SourceError(doc.path, line, dotted(loc + (lang,)), f"missing {lang} translation"))
        for lang, value in text.items():
            where = loc + (lang,)
            if lang not in config.lang_codes:
                hint = did_you_mean(str(lang), config.lang_codes)
                errors.append(err(doc, where, f"unknown language '{lang}'{hint}"))
                continue
            if not isinstance(value, str):
                continue
            prose = _CODE.sub("", value)
            # one line per text: `<a href="javascript:...">` is reported as HTML, not also as a script URL
            if m := _HTML.search(prose):
                errors.append(err(doc, where, f"HTML is not allowed in text (found '{m.group(0)[:20]}')"))
            elif m := _JS_URL.search(prose):
                errors.append(err(doc, where, f"'{m.group(0)}' URLs are not allowed"))
            elif m := _ATTR_LIST.search(prose):
                errors.append(err(doc, where, f"Markdown attribute lists are not allowed in text "
                                              f"(found '{m.group(0)[:20]}')"))
            if (spotted := named.get(lang)) and spotted.search(folded := _as_read(prose)):
                errors += _term_base(doc, where, folded, terms[lang])
            if number := _number_format(prose, config.language(lang).decimal):
                errors.append(err(doc, where, number))
    return errors


def _number_format(prose: str, decimal: str) -> str | None:
    """The first number written against the language's decimal separator (outside code), as an error message."""
    if decimal == ".":
        if m := _COMMA_DECIMAL.search(prose):
            return f"number '{m.group(0)}' uses a decimal comma; this language writes '{m.group(0).replace(',', '.')}'"
        if m := _SEMICOLON_LIST.search(prose):
            return f"'{m.group(0)[:30]}' parts numbers with semicolons; this language writes commas, as code does"
    elif m := _POINT_DECIMAL.search(prose):
        return f"number '{m.group(0)}' uses a decimal point; this language writes '{m.group(0).replace('.', ',')}'"
    return None


def _any_term(terms: dict[str, Term]) -> re.Pattern[str] | None:
    """A pattern that finds any forbidden or alternative term of a term base in casefolded text: most texts hold
    none, and need no closer look."""
    words = {w.casefold() for t in terms.values() for w in (*t.forbidden, *t.alternatives)}
    return re.compile("|".join(map(re.escape, sorted(words)))) if words else None


def _as_read(prose: str) -> str:
    """A text as the term bases read it: a term may be wrapped across lines of a YAML block, so the text with each
    line break as one space (Latin scripts), then with none (CJK, where a wrap inside a word is common)."""
    return (" ".join(prose.split()) + "\n" + re.sub(r"\s*\n\s*", "", prose.strip())).casefold()


def _term_base(doc: Document, where: Path, folded: str, terms: dict[str, Term]) -> list[SourceError]:
    """The forbidden terms and synonyms of a term base in a text (read by `_as_read`)."""
    errors = []
    for concept, term in terms.items():
        for bad, why in term.forbidden.items():
            if bad.casefold() in folded:
                errors.append(err(doc, where, f"forbidden term '{bad}' for {concept}: {why}; write '{term.preferred}'"))
        if not term.alternatives:
            continue
        # a synonym of a glossary term: the page would name one concept two ways
        others = folded.replace(term.preferred.casefold(), "\0")
        for alt, why in term.alternatives.items():
            if alt.casefold() in others:
                errors.append(err(doc, where, f"inconsistent term '{alt}' for {concept} ({why}); "
                                              f"the term base and glossary write '{term.preferred}'"))
    return errors


def check_plain(item: Loaded) -> list[SourceError]:
    """Plain-string fields (titles, config names, file paths) hold no HTML, script URL or attribute list either;
    code, TeX and example inputs are shown escaped and are not checked."""
    errors = []
    for loc, value in walk(item.model):
        if not isinstance(value, str) or not loc or loc[-1] in {"code", "tex", "function", "url"} or "inputs" in loc:
            continue
        for pattern, what in ((_HTML, "HTML is not allowed"), (_JS_URL, "script URLs are not allowed"),
                              (_ATTR_LIST, "Markdown attribute lists are not allowed")):
            if m := pattern.search(value):
                errors.append(err(item.doc, loc, f"{what} (found '{m.group(0)[:20]}')"))
                break
        if "`" in value and loc[-1] in _CODE_SPAN_FIELDS:
            errors.append(err(item.doc, loc, "a backtick is not allowed here (the value is shown as code)"))
    return errors
