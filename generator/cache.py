"""A content-addressed cache of expensive, deterministic results (snippet runs, KaTeX HTML) under .cache/atlas/.

A key is the hash of everything the result depends on, so an edited snippet, example or formula, or a new torch
or KaTeX version, is a miss; there is nothing to invalidate by hand.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class Cache:
    def __init__(self, path: Path | None):
        self.path = path
        self.data: dict[str, Any] = {}
        if path is not None and path.is_file():
            try:
                self.data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.data = {}

    def get(self, k: str) -> Any:
        return self.data.get(k)

    def put(self, k: str, value: Any) -> None:
        self.data[k] = value

    def save(self) -> None:
        if self.path is not None:
            write_atomic(self.path, json.dumps(self.data).encode())


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it: a reader (another build, a test worker)
    sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def cache_dir(root: Path) -> Path:
    return root / ".cache" / "atlas"
