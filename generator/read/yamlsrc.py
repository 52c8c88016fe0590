"""Safe YAML -> plain Python data, keeping the line of every field.

Only the YAML core types are built (no Python objects), anchors and aliases are refused (no alias
bombs), duplicate keys are errors, and every string is checked to be NFC so that search and diffs
behave, and to hold no bidirectional-override characters (which make code read differently from how it runs).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..errors import SourceError

Path = tuple[str | int, ...]

_CORE_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "seq", "map")
}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# "Trojan Source" characters: embeddings, overrides and isolates reorder what an editor shows
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_KINDS = {dict: "mapping", list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


@dataclass
class Document:
    """A parsed YAML file: its data and the 1-based line of every path in it."""

    path: str
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)

    def line_of(self, loc: Path) -> int:
        """Line of the longest prefix of ``loc`` that exists in the file (1 for the root)."""
        for n in range(len(loc), -1, -1):
            if loc[:n] in self.lines:
                return self.lines[loc[:n]]
        return 1


def dotted(loc: Path) -> str:
    """``('formula', 'symbols', 0, 'meaning')`` -> ``formula.symbols[0].meaning``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Builder:
    def __init__(self, path: str):
        self.path = path
        self.lines: dict[Path, int] = {}
        self.errors: list[SourceError] = []
        self._seen: set[int] = set()
        self._alias_reported = False
        self._scalar = yaml.SafeLoader("")

    def err(self, node: yaml.Node, loc: Path, message: str) -> None:
        self.errors.append(SourceError(self.path, node.start_mark.line + 1, dotted(loc) or "document", message))

    def build(self, node: yaml.Node, loc: Path) -> Any:
        if id(node) in self._seen:  # an alias: reported once, never expanded (a billion laughs stays one line)
            if not self._alias_reported:
                # the node is the anchored one: the alias's own line is that of its key, or of its list
                line = self.lines.get(loc, self.lines.get(loc[:-1], node.start_mark.line + 1))
                self.errors.append(SourceError(self.path, line, dotted(loc) or "document",
                                               "YAML anchors and aliases are not allowed in sources"))
            self._alias_reported = True
            return None
        self._seen.add(id(node))
        self.lines.setdefault(loc, node.start_mark.line + 1)
        # a plain scalar's style is None from PyYAML, "" from libyaml
        if node.tag == _TIMESTAMP and isinstance(node, yaml.ScalarNode) and not node.style:
            return self._text(node, loc, node.value)  # an unquoted date is text, as every release name is
        if node.tag not in _CORE_TAGS:
            self.err(node, loc, f"YAML tag '{node.tag}' is not allowed (only plain values)")
            return None
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _CORE_TAGS:
                    self.err(key_node, loc, "mapping keys must be plain strings")
                    continue
                key = key_node.value
                if key == "<<":
                    self.err(key_node, loc, "YAML merge keys ('<<') are not allowed")
                    continue
                if key in out:
                    first = self.lines.get(loc + (key,), "?")
                    self.err(key_node, loc + (key,), f"duplicate key '{key}' (first defined on line {first})")
                    continue
                self.lines[loc + (key,)] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, loc + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, loc + (i,)) for i, item in enumerate(node.value)]
        try:
            value = self._scalar.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError):  # `!!int abc`, `!!map x`: a core tag on a value it cannot be
            self.err(node, loc, f"'{node.value}' is not a valid {node.tag.rsplit(':', 1)[-1]}")
            return None
        return self._text(node, loc, value) if isinstance(value, str) else value

    def _text(self, node: yaml.Node, loc: Path, value: str) -> str:
        if not unicodedata.is_normalized("NFC", value):
            self.err(node, loc, "text is not in Unicode NFC form (normalize it, e.g. with unicodedata.normalize)")
        if m := _BIDI.search(value):
            self.err(node, loc, f"bidirectional control character U+{ord(m.group(0)):04X} is not allowed")
        return value


def _compose(text: str) -> yaml.Node | None:
    """The node tree of ``text``: by libyaml (about ten times faster: the translation stamps alone are 9,000 lines
    per language) when PyYAML has it and the text parses; otherwise, and for every error, by PyYAML's own parser,
    whose wording and positions the errors give. Text with a character PyYAML's reader refuses goes to it directly,
    since libyaml allows some of them."""
    if yaml.__with_libyaml__ and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        try:
            return yaml.compose(text, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse(path: str, raw: bytes) -> tuple[Document | None, list[SourceError]]:
    """Parse ``raw`` bytes of the file ``path``; return the document or the errors found."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [SourceError(path, line, "file", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]
    if not text.strip():
        return None, [SourceError(path, 1, "file", "the file is empty")]
    try:
        node = _compose(text)
    except yaml.reader.ReaderError as exc:  # a control character (NUL, BEL, ...) anywhere in the file
        line = text[: exc.position].count("\n") + 1
        return None, [SourceError(path, line, "yaml", f"control character U+{exc.character:04X} is not allowed")]
    except RecursionError:
        return None, [SourceError(path, 1, "yaml", "the document is nested too deeply")]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if "\t" in text.splitlines()[line - 1 if line <= len(text.splitlines()) else -1]:
            problem += " (tabs are not allowed in YAML indentation; use spaces)"
        return None, [SourceError(path, line, "yaml", f"syntax error: {problem}")]
    except yaml.YAMLError as exc:
        return None, [SourceError(path, 1, "yaml", str(exc).replace("\n", " "))]
    if node is None:
        return None, [SourceError(path, 1, "file", "the file holds no fields (only comments or blank lines)")]
    builder = _Builder(path)
    try:
        data = builder.build(node, ())
    except RecursionError:
        return None, [SourceError(path, 1, "yaml", "the document is nested too deeply")]
    if not builder.errors and not isinstance(data, dict):
        kind = "null" if data is None else _KINDS.get(type(data), type(data).__name__)
        builder.err(node, (), f"the document must be a mapping of fields, not a {kind}")
    if builder.errors:
        return None, builder.errors
    return Document(path, data, builder.lines), []
