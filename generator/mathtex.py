"""TeX -> HTML with KaTeX (npm), once per build, so pages need no JavaScript for maths."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

_SCRIPT = Path(__file__).with_name("katex_render.js")
# KaTeX comes from the project's own node_modules, whatever checkout `--root` points at
KATEX_DIST = Path(__file__).resolve().parents[1] / "node_modules" / "katex" / "dist"


@dataclass(frozen=True)
class Rendered:
    html: str | None
    error: str | None


class KatexUnavailable(RuntimeError):
    pass


def render_many(items: list[tuple[str, bool]]) -> list[Rendered]:
    """Render ``(tex, display)`` pairs; each result holds HTML or KaTeX's error message."""
    if not items:
        return []
    node = shutil.which("node")
    if node is None or not KATEX_DIST.is_dir():
        raise KatexUnavailable("KaTeX is not installed: run `make setup` (needs node and `npm ci`)")
    proc = subprocess.run(
        [node, str(_SCRIPT)],
        input=json.dumps([{"tex": t, "display": d} for t, d in items]),
        capture_output=True, text=True, check=True,
    )
    return [Rendered(r.get("html"), r.get("error")) for r in json.loads(proc.stdout)]


def short_error(message: str) -> str:
    """KaTeX's message without its 'KaTeX parse error:' prefix."""
    return re.sub(r"^KaTeX parse error:\s*", "", message)
