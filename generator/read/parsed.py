"""Parsed YAML documents kept by content: a file whose bytes were parsed before, in this process or in an earlier
one (through the checkout's `.cache/atlas/parsed.pickle`), is not composed and walked again. The key is the file's
bytes and the parser's own code (`yamlsrc.py`), so an edit to either is a miss. Only documents without errors are
kept: an error is always found, and worded, by the parser itself.

The store holds pickles written by this project's own code into its own cache folder: it is read with the same
trust as the code, and a store that cannot be read is ignored."""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..cache import write_atomic
from ..errors import SourceError
from . import yamlsrc
from .yamlsrc import Document

_MEMO: dict[str, bytes] = {}  # key -> pickled (data, lines)
_STORED: dict[Path, frozenset[str]] = {}  # store -> the keys it held when read
_READS: list[set[str]] = []  # the keys each read in progress (`reading`) has parsed or found
# what unpickling damaged bytes raises
_DAMAGED = (pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError, IndexError)


@functools.cache
def _code() -> bytes:
    return Path(yamlsrc.__file__).read_bytes()


def _key(raw: bytes) -> str:
    return hashlib.sha256(_code() + b"\0" + raw).hexdigest()


def parse(path: str, raw: bytes) -> tuple[Document | None, list[SourceError]]:
    """`yamlsrc.parse`, unless the same bytes were parsed before."""
    key = _key(raw)
    for used in _READS:
        used.add(key)
    if (hit := _MEMO.get(key)) is not None:
        try:
            data, lines = pickle.loads(hit)  # noqa: S301 - written by `parse` below, or read from this checkout's store
        except _DAMAGED:
            del _MEMO[key]  # a damaged entry: parsed again below
        else:
            return Document(path, data, lines), []
    doc, errors = yamlsrc.parse(path, raw)
    if doc is not None:
        _MEMO[key] = pickle.dumps((doc.data, doc.lines), protocol=pickle.HIGHEST_PROTOCOL)
    return doc, errors


@contextmanager
def reading(store: Path | None) -> Iterator[None]:
    """Around one read of a checkout: the parses ``store`` holds are used, and afterwards it holds those of the
    files read (the store follows the sources: old versions of a file do not pile up). None: no store."""
    if store is None:
        yield
        return
    _load(store)
    used: set[str] = set()
    _READS.append(used)
    try:
        yield
    finally:
        _READS.remove(used)
    kept = {k: _MEMO[k] for k in sorted(used) if k in _MEMO}
    if frozenset(kept) != _STORED.get(store):
        write_atomic(store, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        _STORED[store] = frozenset(kept)


def _load(store: Path) -> None:
    """Add what ``store`` holds to this process's memo (nothing when it is missing or unreadable)."""
    try:
        saved: Any = pickle.loads(store.read_bytes())  # noqa: S301 - see the module's docstring
    except (OSError, *_DAMAGED):
        return
    if isinstance(saved, dict):
        good = {k: v for k, v in saved.items() if isinstance(k, str) and isinstance(v, bytes)}
        _MEMO.update(good)
        _STORED[store] = frozenset(good)
