"""TeX -> HTML with KaTeX (npm), once per build, so pages need no JavaScript for maths."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import cache as _cache
from .cache import Cache

_SCRIPT = Path(__file__).with_name("katex_render.js")
# KaTeX comes from the project's own node_modules, whatever checkout `--root` points at
KATEX_DIST = Path(__file__).resolve().parents[1] / "node_modules" / "katex" / "dist"


@dataclass(frozen=True)
class Rendered:
    html: str | None
    error: str | None


class KatexUnavailable(RuntimeError):
    pass


def render_many(items: list[tuple[str, bool]], cache: Cache | None = None) -> list[Rendered]:
    """Render ``(tex, display)`` pairs; each result holds HTML or KaTeX's error message.
    HTML rendered before by the same KaTeX version is taken from ``cache``."""
    cache = cache or Cache(None)
    version = _katex_version()
    keys = [_cache.key("katex", tex, display, version) for tex, display in items]
    missing = sorted({(tex, d) for (tex, d), k in zip(items, keys, strict=True) if cache.get(k) is None})
    for (tex, d), res in zip(missing, _run_katex(missing), strict=True):
        if res.html is not None:
            cache.put(_cache.key("katex", tex, d, version), res.html)
        else:
            cache.put(_cache.key("katex-error", tex, d, version), res.error)
    out = []
    for (tex, d), k in zip(items, keys, strict=True):
        html = cache.get(k)
        out.append(Rendered(html, None) if html is not None else
                   Rendered(None, cache.get(_cache.key("katex-error", tex, d, version))))
    return out


def _katex_version() -> str:
    try:
        return json.loads((KATEX_DIST.parent / "package.json").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return "unknown"


def _run_katex(items: list[tuple[str, bool]]) -> list[Rendered]:
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
