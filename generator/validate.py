"""Cross-file rules over loaded metrics: translations, safety of text, ids, references, term bases."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from .config import Config, Term
from .errors import SourceError, did_you_mean
from .i18n import texts
from .load import Loaded
from .schema import Text
from .sheetfit import CELL, width
from .snippets import defines, snippets_of
from .yamlsrc import Document, Path, dotted

# a tag starts right after '<' (so prose such as "length < cap" or "a<b" without a closing '>' is fine)
_HTML = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<!--|<\?|<script|&#?\w+;", re.I)
_JS_URL = re.compile(r"(?i)\b(javascript|vbscript|data)\s*:")
_CODE = re.compile(r"`[^`]*`")
# Markdown attribute lists (`{: onclick=...}`, `{#id .class}`) would set attributes on the page's elements
_ATTR_LIST = re.compile(r"\{[:#.][^{}]*\}|\{[^{}]*=[^{}]*\}")
# plain-string fields shown inside `code` on the pages: a backtick would end the code span
_CODE_SPAN_FIELDS = {"name", "default", "reduction", "file", "key", "logged_as", "library"}


def walk(value: Any, loc: Path = ()) -> Iterator[tuple[Path, Any]]:
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


def _err(item: Loaded | Document, loc: Path, message: str) -> SourceError:
    doc = item.doc if isinstance(item, Loaded) else item
    return SourceError(doc.path, doc.line_of(loc), dotted(loc), message)


def check_text(doc: Document, config: Config, terms: dict[str, dict[str, Term]]) -> list[SourceError]:
    """Translations present, no HTML or script URLs, no forbidden terms, in every text of a parsed file."""
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
                msg = f"unknown language '{lang}'" + did_you_mean(str(lang), config.lang_codes)
                errors.append(_err(doc, where, msg))
                continue
            if not isinstance(value, str):
                continue
            prose = _CODE.sub("", value)
            # one line per text: `<a href="javascript:...">` is reported as HTML, not also as a script URL
            if m := _HTML.search(prose):
                errors.append(_err(doc, where, f"HTML is not allowed in text (found '{m.group(0)[:20]}')"))
            elif m := _JS_URL.search(prose):
                errors.append(_err(doc, where, f"'{m.group(0)}' URLs are not allowed"))
            elif m := _ATTR_LIST.search(prose):
                errors.append(_err(doc, where, f"Markdown attribute lists are not allowed in text "
                                               f"(found '{m.group(0)[:20]}')"))
            for concept, term in terms.get(lang, {}).items():
                for bad, why in term.forbidden.items():
                    if bad in prose:
                        errors.append(
                            _err(doc, where, f"forbidden term '{bad}' for {concept}: {why}; write '{term.preferred}'")
                        )
                # a synonym of a glossary term: the page would name one concept two ways
                folded = prose.casefold().replace(term.preferred.casefold(), "\0")
                for alt, why in term.alternatives.items():
                    if alt.casefold() in folded:
                        errors.append(_err(doc, where, f"inconsistent term '{alt}' for {concept} ({why}); "
                                                       f"the term base and glossary write '{term.preferred}'"))
    return errors


def check_metric(item: Loaded, config: Config) -> list[SourceError]:
    m = item.model
    errors = []
    trainer = config.trainers.get(m.trainer)
    if trainer is None:
        errors.append(
            _err(item, ("trainer",), f"unknown trainer '{m.trainer}'" + did_you_mean(m.trainer, list(config.trainers)))
        )
    elif m.category not in trainer.categories:
        errors.append(
            _err(item, ("category",), f"unknown category '{m.category}'" + did_you_mean(m.category, trainer.categories))
        )
    if not m.conformance.checked and m.conformance.reason is None:
        errors.append(_err(item, ("conformance",), "say why the metric is not conformance-checked (reason)"))
    for i, flag in enumerate(m.healthy.red_flags):
        if flag.op in {">", ">=", "<", "<=", "==", "!="} and flag.value is None:
            errors.append(_err(item, ("healthy", "red_flags", i, "op"), f"op '{flag.op}' needs a value"))
    lo, hi = m.healthy.bounds.min, m.healthy.bounds.max
    if rng := m.healthy.range:
        if (lo is not None and rng.min is not None and rng.min < lo) or (
            hi is not None and rng.max is not None and rng.max > hi
        ):
            errors.append(_err(item, ("healthy", "range"), "healthy range lies outside the mathematical bounds"))
    for loc, snip in snippets_of(m):
        if not defines(snip.code, snip.function):
            errors.append(_err(item, loc + ("function",), f"the code defines no function '{snip.function}'"))
    return errors + check_symbols(item) + check_plain(item)


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
                errors.append(_err(item, loc, f"{what} (found '{m.group(0)[:20]}')"))
                break
        if "`" in value and loc[-1] in _CODE_SPAN_FIELDS:
            errors.append(_err(item, loc, "a backtick is not allowed here (the value is shown as code)"))
    return errors


_TEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\S")
_TEX_SPACING = re.compile(r"\\[,;:! ]|\\q?quad|\\(left|right|[bB]igg?[lrm]?)")


def _tex_tokens(tex: str) -> list[str]:
    return [t for t in _TEX_TOKEN.findall(tex) if not _TEX_SPACING.fullmatch(t)]


def _tex_join(tokens: list[str]) -> str:
    return "".join(t + (" " if re.fullmatch(r"\\[A-Za-z]+", t) and i + 1 < len(tokens) and tokens[i + 1][0].isalpha()
                        else "") for i, t in enumerate(tokens))


def _symbol_parts(tex: str) -> list[list[str]]:
    """A symbol row may list several symbols (`M,\\ P`): split at top-level commas."""
    parts: list[list[str]] = [[]]
    depth = 0
    for t in _tex_tokens(tex):
        depth += (t == "{") - (t == "}")
        if t == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return [p for p in parts if p]


def _occurs(part: list[str], formula: list[str]) -> bool:
    """``part`` is a run of ``formula``'s tokens, braces aside; `\\cdot` in a symbol stands for any argument."""
    text = "".join(t + "\x1f" for t in formula if t not in "{}")
    pattern = "".join(r"(?:[^\x1f]+\x1f)+?" if t == r"\cdot" else re.escape(t + "\x1f") for t in part if t not in "{}")
    return re.search(r"(?:^|(?<=\x1f))" + pattern, text) is not None


def check_symbols(item: Loaded) -> list[SourceError]:
    """Every symbol explained under a formula occurs in that formula (a renamed or misspelt symbol does not)."""
    m = item.model
    formulas = [(("formula",), m.formula)] + [(("variants", i, "formula"), v.formula)
                                               for i, v in enumerate(m.variants) if v.formula is not None]
    errors = []
    for loc, f in formulas:
        tokens = _tex_tokens(f.tex)
        for i, sym in enumerate(f.symbols):
            for part in _symbol_parts(sym.tex):
                if not _occurs(part, tokens):
                    shown = _tex_join(part)
                    runs = {_tex_join(tokens[a:b]) for a in range(len(tokens))
                            for b in range(a + 1, min(a + 2 * len(part) + 2, len(tokens) + 1))
                            if tokens[a:b].count("{") == tokens[a:b].count("}")}
                    errors.append(_err(item, loc + ("symbols", i, "tex"), f"symbol '{shown}' does not occur in the "
                                       f"formula" + did_you_mean(shown, sorted(runs))))
    return errors


def _home(item: Loaded) -> str:
    return f"metrics/{item.model.trainer}/{item.model.slug}.yaml"


def check_all(items: list[Loaded], docs: list[Document], config: Config,
              terms: dict[str, dict[str, Term]]) -> list[SourceError]:
    """Every cross-file error over the valid ``items`` and the text of every parsed document."""
    errors: list[SourceError] = [e for doc in docs for e in check_text(doc, config, terms)]
    by_id: dict[str, Loaded] = {}
    # a file at its key's own path is the original; any other file with that key is the duplicate
    at_home = sorted(items, key=lambda it: it.path != _home(it))
    for item in at_home:
        errors += check_metric(item, config)
        m = item.model
        if (first := by_id.get(m.id)) is not None:
            errors.append(_err(item, ("key",), f"duplicate metric '{m.id}' (also in {first.path}:{first.line('key')})"))
            continue
        by_id[m.id] = item
        if item.path != _home(item) and m.trainer in config.trainers:  # an unknown trainer is reported already
            errors.append(_err(item, ("key",), f"the file of key '{m.key}' must be {_home(item)}"))
    ids = sorted(by_id)
    for item in items:
        lists = [(("related",), item.model.related)] + [
            (("variants", v, "related"), var.related) for v, var in enumerate(item.model.variants) if var.related]
        for loc, related in lists:
            for i, ref in enumerate(related):
                if ref not in by_id:
                    errors.append(_err(item, loc + (i,), f"unknown metric '{ref}'" + did_you_mean(ref, ids)))
    return errors


def check_cheatsheets(items: list[Loaded], config: Config, ui: dict[str, dict[str, str]]) -> list[SourceError]:
    """A trainer's sheet has distinct `cheatsheet.order`s and a 'read the curves' strip in the UI strings; a
    `first_try` written for the sheet fits its cell in every language."""
    errors = []
    seen: dict[tuple[str, int], Loaded] = {}
    for item in sorted(items, key=lambda it: it.path):
        entries = [(("cheatsheet",), item.model.cheatsheet)] + [
            (("variants", i, "cheatsheet"), var.cheatsheet) for i, var in enumerate(item.model.variants)]
        for loc, sheet_entry in entries:
            first_try = sheet_entry.first_try.root if sheet_entry and sheet_entry.first_try else {}
            for lang, text in sorted(first_try.items()):
                if (cols := width(text)) > CELL:
                    errors.append(_err(item, loc + ("first_try", lang),
                                       f"{cols} columns; at most {CELL} fit the sheet's 'first thing to try' cell"))
        entry = item.model.cheatsheet
        if entry is None:
            continue
        where = (item.model.trainer, entry.order)
        if (first := seen.get(where)) is not None:
            errors.append(_err(item, ("cheatsheet", "order"),
                               f"cheat-sheet position {entry.order} is taken (also in {first.path})"))
        seen.setdefault(where, item)
    for trainer in sorted({t for t, _ in seen}):
        if f"cheatsheet_strip_{trainer}" not in ui.get(config.default_lang, {}):
            errors.append(SourceError(f"locales/{config.default_lang}/ui.yaml", 1, f"cheatsheet_strip_{trainer}",
                                      f"the {trainer} cheat-sheet needs its 'read the curves in this order' strip"))
    return errors
