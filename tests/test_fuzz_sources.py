"""Fuzzing the sources: a valid metric file, mutated the ways files really break (a line deleted, duplicated or
re-indented, a value of the wrong type, the file cut short, tabs, NUL, odd Unicode, bytes that are not UTF-8),
gives either success or `path:line: field: message` lines from `atlas check`, never a traceback.

`make test` runs a few tens of examples; `make fuzz` runs many more (ATLAS_FUZZ_EXAMPLES, and ATLAS_FUZZ_SNIPPETS=1
to run the snippets too)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.cli import main

from .conftest import EXEMPLAR, ROOT, copy_sources

EXAMPLES = int(os.environ.get("ATLAS_FUZZ_EXAMPLES", "50"))
WITH_SNIPPETS = os.environ.get("ATLAS_FUZZ_SNIPPETS") == "1"
LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<field>[^:]+): (?P<message>.+)$")

ODD = ["\t", "\x00", "\x07", "\x1b", "\r", "\n", "\u0085", "\u2028", "\u00a0", "\u200b", "\ufeff", "\u202e",
       "\u2066", "e\u0301", "\U0001f600", "\ud7ff", ":", ": ", "- ", "? ", "{", "}", "[", "]", "'", '"', "#", "&a ",
       "*a", "!", "!!python/object/apply:os.system ", "!!map ", "|", ">", "%", "@", "`", "```", "\\", "---\n",
       "<script>", "{: onclick=x}", "[x](javascript:y)", "<<: ", "&#60;"]
VALUES = ["[]", "{}", "null", "~", "0", "-1", "-1.5", "1e400", ".nan", ".inf", "true", "'x'", '""', "[1, [2]]",
          "{a: 1}", "[[0.1, 0.2], [0.3]]", "2024-01-01", "!!binary aGk=", "!!int x", "&a 1", "*a", "|", "<b>x</b>",
          "javascript:x()", "0.17.3", "grpo/nope", "'  '", "{en: x}", "{en: x, zh: y, vi: z}", "0x1F", "1_000"]
KINDS = ["delete", "duplicate", "retype", "truncate", "inject", "reindent", "swap", "bytes"]

mutation = st.tuples(st.sampled_from(KINDS), st.integers(0, 1 << 20), st.integers(0, 1 << 20),
                     st.one_of(st.sampled_from(ODD), st.text(max_size=4)), st.sampled_from(VALUES),
                     st.sampled_from([-4, -2, -1, 1, 2, 4, "tab"]))


def mutate(raw: bytes, kind: str, a: int, b: int, chars: str, value: str, indent: int | str) -> bytes:
    """One mutation of a file's bytes; positions ``a`` and ``b`` are taken modulo the file's size."""
    if kind == "bytes":
        i = a % (len(raw) + 1)
        return raw[:i] + [b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\x00"][b % 5] + raw[i:]
    text = raw.decode("utf-8", errors="surrogateescape")
    lines = text.split("\n")
    i, j = a % len(lines), b % len(lines)
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "retype":
        m = re.match(r"^(\s*(?:- )?[\w-]+:)", lines[i])
        lines[i] = f"{m.group(1)} {value}" if m else value
    elif kind == "truncate":
        return raw[: a % (len(raw) + 1)]
    elif kind == "inject":
        k = a % (len(text) + 1)
        return (text[:k] + chars + text[k:]).encode("utf-8", errors="surrogatepass")
    elif kind == "reindent":
        body = lines[i].lstrip(" ")
        width = len(lines[i]) - len(body)
        lines[i] = ("\t" + body) if indent == "tab" else " " * max(0, width + int(indent)) + body
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines).encode("utf-8", errors="surrogateescape")


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory) -> tuple[Path, bytes]:
    """A throwaway checkout with the exemplar (its references to other metrics removed), its cache warmed."""
    from generator.pipeline import load_atlas

    root = copy_sources(tmp_path_factory.mktemp("fuzz") / "src", [EXEMPLAR])
    path = root / EXEMPLAR
    path.write_text(re.sub(r"(?m)^related: .*$", "related: []", path.read_text(encoding="utf-8")), encoding="utf-8")
    load_atlas(root)
    return root, path.read_bytes()


def test_mutations_are_applied():
    raw = b"key: a\ntrainer: grpo\n"
    assert mutate(raw, "delete", 0, 0, "", "", 1) == b"trainer: grpo\n"
    assert mutate(raw, "retype", 1, 0, "", "[]", 1) == b"key: a\ntrainer: []\n"
    assert mutate(raw, "reindent", 1, 0, "", "", "tab") == b"key: a\n\ttrainer: grpo\n"
    assert mutate(raw, "bytes", 0, 0, "", "", 1) == b"\xffkey: a\ntrainer: grpo\n"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_source_gives_success_or_one_line_errors(fuzz_root, mutations):
    root, original = fuzz_root
    raw = original
    for m in mutations:
        raw = mutate(raw, *m)
    (root / EXEMPLAR).write_bytes(raw)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--root", str(root), "check"] + ([] if WITH_SNIPPETS else ["--no-snippets"]))
    finally:
        (root / EXEMPLAR).write_bytes(original)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    assert "Traceback" not in err.getvalue()
    assert (code == 0 and not lines) or (code == 1 and lines), (code, lines)
    for ln in lines:
        m = LINE.match(ln)
        assert m, f"not a `path:line: field: message` line: {ln!r}"
        assert m["path"] == EXEMPLAR, ln
        assert 1 <= int(m["line"]) <= raw.count(b"\n") + 1, ln


def _tree(node) -> tuple:
    """A composed YAML node as plain data: kind, tag, value and line, all the way down (aliases by identity)."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, node.style or None, node.start_mark.line)
    items = [(_tree(k), _tree(v)) for k, v in node.value] if isinstance(node, yaml.MappingNode) else \
        [_tree(v) for v in node.value]
    return (type(node).__name__, node.tag, node.start_mark.line, items)


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(mutations=st.lists(mutation, min_size=1, max_size=3))
def test_libyaml_composes_what_pyyaml_composes(mutations):
    """The sources are parsed by libyaml when it succeeds (see yamlsrc._compose), by PyYAML otherwise: on mutated
    sources, whatever libyaml accepts, PyYAML composes to the same tree, lines included."""
    import yaml

    from generator.read.yamlsrc import _compose

    raw = (ROOT / EXEMPLAR).read_bytes()
    for m in mutations:
        raw = mutate(raw, *m)
    try:
        text = raw.decode("utf-8")
        expected = yaml.compose(text, Loader=yaml.SafeLoader)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return
    got = _compose(text)
    assert (got is None) == (expected is None)
    if got is not None:
        assert _tree(got) == _tree(expected)
