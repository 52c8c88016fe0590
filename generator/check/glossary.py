"""Rules on glossary entries: file names match ids, references resolve, tooltips are plain lines, and each term is
the term base's preferred one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from ..errors import SourceError, did_you_mean
from ..read.config import Config, Term
from ..read.load import Loaded
from ..read.yamlsrc import Document
from .text import err

# a short definition becomes a link's title attribute (the tooltip): plain text, one line
_NOT_IN_SHORT = re.compile(r"[`|\"\[\]*\n<>]")


def check_glossary(entries: Sequence[Loaded], docs: Sequence[Document], config: Config,
                   terms: dict[str, dict[str, Term]]) -> list[SourceError]:
    errors = []
    # an entry with errors of its own is still known
    ids = sorted(PurePosixPath(doc.path).stem for doc in docs if doc.path.startswith("glossary/"))
    for it in entries:
        e = it.model
        if PurePosixPath(it.path).stem != e.id:
            errors.append(err(it.doc, ("id",), f"the file of entry '{e.id}' must be glossary/{e.id}.yaml"))
        for i, ref in enumerate(e.see_also):
            if ref not in ids or ref == e.id:
                errors.append(err(it.doc, ("see_also", i), f"unknown glossary entry '{ref}'" + did_you_mean(ref, ids)))
        for lang, text in e.short.root.items():
            if m := _NOT_IN_SHORT.search(text):
                errors.append(err(it.doc, ("short", lang),
                                  f"a tooltip is one line of plain text (found {m.group(0)!r})"))
        for lang in e.match:
            if lang not in config.lang_codes:
                errors.append(err(it.doc, ("match", lang),
                                  f"unknown language '{lang}'" + did_you_mean(lang, config.lang_codes)))
        for lang, base in terms.items():
            if not base:
                continue  # a language without a term base (English)
            written = e.term.get(lang)
            if e.id not in base:
                errors.append(err(it.doc, ("term", lang), f"'{e.id}' is missing from locales/{lang}/terms.yaml "
                                                          f"(add it with preferred: {written})"))
            elif written and written != base[e.id].preferred:
                errors.append(err(it.doc, ("term", lang), f"'{written}' differs from the term base's preferred "
                                                          f"'{base[e.id].preferred}' (locales/{lang}/terms.yaml)"))
    return errors
