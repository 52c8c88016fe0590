"""Translation status: for every translated field of every source file, whether a language has it, lacks it, or
holds a translation of an older English text.

Staleness is found without git history. ``locales/<lang>/stamps.yaml`` records, per file and field, a fingerprint
of the English text a translation was made from and one of the translation itself (`atlas i18n stamp` writes it).
When the English fingerprint no longer matches while the translation is unchanged, the English moved on after the
translation was written: the field is stale. When both changed, a translator revised the translation after the
English changed, and the next stamp records the new pair."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path as FsPath
from typing import Any, Literal

from ..errors import SourceError, SourceErrors
from .load import read_optional
from .yamlsrc import Document, Path, dotted

State = Literal["current", "missing", "stale", "unstamped"]
STATES: tuple[State, ...] = ("current", "stale", "unstamped", "missing")
STAMPS_FILE = "stamps.yaml"
_STAMP = re.compile(r"^([0-9a-f]{8}) ([0-9a-f]{8})$")
Stamps = dict[str, dict[str, tuple[str, str]]]  # file -> field -> (English fingerprint, translation fingerprint)


def fingerprint(text: str) -> str:
    """8 hex digits identifying a text up to Unicode normalisation and surrounding or repeated whitespace."""
    norm = " ".join(unicodedata.normalize("NFC", text).split())
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:8]


def texts(data: Any, default_lang: str, loc: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every translated text of raw YAML data: each mapping with a string in the default language."""
    if isinstance(data, dict):
        if isinstance(data.get(default_lang), str):
            yield loc, data
            return
        for k, v in data.items():
            yield from texts(v, default_lang, loc + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from texts(v, default_lang, loc + (i,))


@dataclass(frozen=True)
class Field:
    """One translated field of one file, in one language."""

    path: str
    line: int
    loc: Path
    state: State
    english: str

    @property
    def name(self) -> str:
        return dotted(self.loc)

    @cached_property
    def kind(self) -> str:
        """The field with list positions and the variant number dropped, e.g. ``troubleshooting.actions``."""
        return ".".join(str(p) for p in self.loc if not isinstance(p, int) and p != "variants")


def _present(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def field_states(doc: Document, lang: str, default_lang: str, stamps: Stamps) -> list[Field]:
    """The state of every translated field of ``doc`` in ``lang``."""
    recorded = stamps.get(doc.path, {})
    out = []
    for loc, text in texts(doc.data, default_lang):
        english = text[default_lang]
        line = doc.line_of(loc + (lang,)) if lang in text else doc.line_of(loc)
        value = text.get(lang)
        if not _present(value):
            state: State = "missing"
        elif (stamp := recorded.get(dotted(loc))) is None:
            state = "unstamped"
        elif stamp[0] != fingerprint(english) and stamp[1] == fingerprint(value):
            state = "stale"
        else:
            state = "current"
        out.append(Field(doc.path, line, loc, state, english))
    return out


def stamps_path(root: FsPath, lang: str) -> FsPath:
    return root / "locales" / lang / STAMPS_FILE


# a line of the file as `dump_stamps` writes it: keys that YAML reads as the same string (a file path, a field name
# that starts with a letter and is not one of YAML's words for true, false and null, a quoted name without escapes)
_DUMPED_FILE = re.compile(r"([\w./-]+\.ya?ml):")
_DUMPED_FIELD = re.compile(r'  (?:"([^"\\]*)"|([A-Za-z_][\w.\[\]/{}-]*)): ([0-9a-f]{8}) ([0-9a-f]{8})')
_YAML_WORDS = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}


def _read_dumped(text: str, lang: str) -> Stamps | None:
    """The stamps of a file exactly as `dump_stamps` writes it, read line by line; None for any other text (edited by
    hand, merged, damaged), which the YAML reader reads and checks. What it reads is what YAML reads: written out
    again it would give back the same text (its header, files and names in order, each name quoted only where
    `_yaml_key` quotes it), and its keys are ones YAML reads as themselves. A YAML parser takes half a second per
    language for the sources' stamps, and every `atlas check` and build reads them; the last few files read are
    remembered by content (a preview rebuilds, the tests read copies of the sources)."""
    done = _dumped_by_content(text, lang)
    return None if done is None else {file: dict(fields) for file, fields in done.items()}


@functools.lru_cache(maxsize=4)
def _dumped_by_content(text: str, lang: str) -> Stamps | None:
    lines = text.split("\n")
    if lines[-1] != "" or lines[:2] != _header(lang):  # the text ends with a newline, after the two comment lines
        return None
    out: Stamps = {}
    fields: dict[str, tuple[str, str]] | None = None
    last_file, last_name = "", ""
    for line in lines[2:-1]:
        if m := _DUMPED_FILE.fullmatch(line):
            if m.group(1) <= last_file or (fields is not None and not fields):
                return None  # out of order, twice, or after a file without fields (YAML's null)
            last_file, last_name = m.group(1), ""
            fields = out[last_file] = {}
        elif (m := _DUMPED_FIELD.fullmatch(line)) and fields is not None:
            quoted, bare = m.group(1), m.group(2)
            name = quoted if quoted is not None else bare
            if name <= last_name and fields:
                return None
            if bare is not None and (not bare.isascii() or bare.lower() in _YAML_WORDS):
                return None  # written with quotes by `_yaml_key`, or read by YAML as something else
            if quoted is not None and _yaml_key(quoted) == quoted:
                return None  # written without quotes by `_yaml_key`
            last_name = name
            fields[name] = (m.group(3), m.group(4))
        else:
            return None
    return out if all(out.values()) else None


def load_stamps(root: FsPath, lang: str) -> Stamps:
    """``locales/<lang>/stamps.yaml`` (empty when absent); a malformed file is one error per bad entry."""
    path = stamps_path(root, lang)
    if path.is_file() and not path.is_symlink():
        try:
            if (done := _read_dumped(path.read_text(encoding="utf-8"), lang)) is not None:
                return done
        except UnicodeDecodeError:
            pass  # the YAML reader says where
    return _load_stamps_yaml(root, lang)


def _load_stamps_yaml(root: FsPath, lang: str) -> Stamps:
    path = stamps_path(root, lang)
    try:  # what `atlas i18n stamp` writes for a language with no translation yet: the comments alone
        if all(not ln.strip() or ln.lstrip().startswith("#") for ln in path.read_text(encoding="utf-8").splitlines()):
            return {}
    except (OSError, UnicodeDecodeError):
        pass  # missing (no stamps) or unreadable: read_optional says which
    doc = read_optional(path, root)
    if doc is None:
        return {}
    rel, errors = doc.path, []  # parse() only returns mappings
    out: Stamps = {}
    for file, fields in doc.data.items():
        if not isinstance(fields, dict):
            errors.append(SourceError(rel, doc.line_of((file,)), str(file), "must map fields to stamps"))
            continue
        for name, value in fields.items():
            m = _STAMP.match(value) if isinstance(value, str) else None
            if m is None:
                errors.append(SourceError(rel, doc.line_of((file, name)), f"{file}[{name}]",
                                          "a stamp is two fingerprints of 8 hex digits ('1a2b3c4d 5e6f7a8b')"))
                continue
            out.setdefault(str(file), {})[str(name)] = (m.group(1), m.group(2))
    if errors:
        raise SourceErrors(errors)
    return out


def new_stamps(docs: Iterable[Document], lang: str, default_lang: str, old: Stamps,
               accept: set[tuple[str, str]] = frozenset()) -> Stamps:
    """Stamps recording every present translation as made from the current English, except stale ones (which keep
    their old stamp, so that they stay stale) unless ``(path, field)`` is in ``accept``; missing ones are dropped."""
    out: Stamps = {}
    for doc in docs:
        for f in field_states(doc, lang, default_lang, old):
            if f.state == "missing":
                continue
            if f.state == "stale" and (f.path, f.name) not in accept and (f.path, "*") not in accept:
                out.setdefault(f.path, {})[f.name] = old[f.path][f.name]
                continue
            value = _lookup(doc.data, f.loc)[lang]
            out.setdefault(f.path, {})[f.name] = (fingerprint(f.english), fingerprint(value))
    return out


def _lookup(data: Any, loc: Path) -> Any:
    for part in loc:
        data = data[part]
    return data


def _header(lang: str) -> list[str]:
    return [f"# The English each {lang} translation was made from, as fingerprints: '<English> <translation>'.",
            "# Written by `atlas i18n stamp`; read by `atlas i18n status`, `atlas check` and the site. Do not edit."]


def dump_stamps(stamps: Stamps, lang: str) -> str:
    lines = _header(lang)
    for file in sorted(stamps):
        lines.append(f"{file}:")
        for name in sorted(stamps[file]):
            en, tr = stamps[file][name]
            lines.append(f"  {_yaml_key(name)}: {en} {tr}")
    return "\n".join(lines) + "\n"


def _yaml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_.\[\]/{}-]+", name) and not name.startswith(("[", "{")) else f'"{name}"'


@dataclass(frozen=True)
class Report:
    """Every translated field of every source, per language."""

    langs: list[str]
    fields: dict[str, list[Field]]  # lang -> fields

    @cached_property
    def _counts(self) -> Counter[tuple[str, str | None, str | None, str | None]]:
        """How many fields per (language, state, path, kind), each of the last three also counted as None (any):
        a status page asks for thousands of such counts."""
        counts: Counter[tuple[str, str | None, str | None, str | None]] = Counter()
        for lang, fields in self.fields.items():
            for f in fields:
                for state in (f.state, None):
                    for path in (f.path, None):
                        counts.update([(lang, state, path, f.kind), (lang, state, path, None)])
        return counts

    def count(self, lang: str, state: State | None = None, path: str | None = None, kind: str | None = None) -> int:
        return self._counts[(lang, state, path, kind)]

    def translated(self, lang: str, **kw: Any) -> int:
        return self.count(lang, **kw) - self.count(lang, "missing", **kw)

    def percent(self, lang: str, **kw: Any) -> float:
        total = self.count(lang, **kw)
        return 100.0 * self.translated(lang, **kw) / total if total else 100.0

    def paths(self) -> list[str]:
        return list(dict.fromkeys(f.path for fields in self.fields.values() for f in fields))

    def kinds(self) -> list[str]:
        return sorted({f.kind for fields in self.fields.values() for f in fields})

    def of_state(self, lang: str, state: State) -> list[Field]:
        return [f for f in self.fields[lang] if f.state == state]


def report(docs: list[Document], langs: list[str], default_lang: str, stamps: dict[str, Stamps]) -> Report:
    return Report(langs, {lang: [f for doc in docs for f in field_states(doc, lang, default_lang, stamps.get(lang, {}))]
                          for lang in langs})
