"""Safe YAML -> plain Python data, keeping the line of every field.

Only the YAML core types are built (no Python objects), anchors and aliases are refused (no alias
bombs), duplicate keys are errors, and every string is checked to be NFC so that search and diffs
behave.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import yaml

from .errors import SourceError

Path = tuple[str | int, ...]

_CORE_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("str", "int", "float", "bool", "null", "seq", "map")
}


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
        self._scalar = yaml.SafeLoader("")

    def err(self, node: yaml.Node, loc: Path, message: str) -> None:
        self.errors.append(SourceError(self.path, node.start_mark.line + 1, dotted(loc) or "document", message))

    def build(self, node: yaml.Node, loc: Path) -> Any:
        if id(node) in self._seen:
            self.err(node, loc, "YAML anchors and aliases are not allowed in sources")
            return None
        self._seen.add(id(node))
        self.lines.setdefault(loc, node.start_mark.line + 1)
        if node.tag not in _CORE_TAGS:
            self.err(node, loc, f"YAML tag '{node.tag}' is not allowed (only plain values)")
            return None
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
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
        value = self._scalar.construct_object(node, deep=True)
        if isinstance(value, str) and not unicodedata.is_normalized("NFC", value):
            self.err(node, loc, "text is not in Unicode NFC form (normalize it, e.g. with unicodedata.normalize)")
        return value


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
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or exc.context or "invalid YAML"
        if "\t" in text.splitlines()[line - 1 if line <= len(text.splitlines()) else -1]:
            problem += " (tabs are not allowed in YAML indentation; use spaces)"
        return None, [SourceError(path, line, "yaml", f"syntax error: {problem}")]
    except yaml.YAMLError as exc:
        return None, [SourceError(path, 1, "yaml", str(exc).replace("\n", " "))]
    builder = _Builder(path)
    data = builder.build(node, ())
    if not builder.errors and not isinstance(data, dict):
        builder.err(node, (), "the document must be a mapping of fields, not a " + type(data).__name__)
    if builder.errors:
        return None, builder.errors
    return Document(path, data, builder.lines), []
