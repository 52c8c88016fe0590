"""TeX -> HTML with KaTeX (npm), once per build, so pages need no JavaScript for maths."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import cache as _cache
from ..cache import Cache
from ..errors import SourceError
from ..install import KATEX_DIST
from ..read.load import Loaded
from ..resolve.variants import each
from .text import err

_SCRIPT = Path(__file__).with_name("katex_render.js")
# \max, \log ... as a subscript or superscript: KaTeX emits a function-application operator inside <msub>
_OPERATOR_SCRIPT = re.compile(r"[_^]\{?\s*\\(max|min|log|exp|sup|inf|lim|arg|det|sin|cos)\b")


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


def render_formulas(metrics: list[Loaded], glossary: list[Loaded],
                    cache: Cache) -> tuple[dict[tuple[str, bool], str], list[SourceError]]:
    """Every formula and symbol of the sources (every variant's too) as KaTeX HTML, by ``(tex, display)``, and
    one error per TeX that KaTeX refuses or would render as invalid MathML."""
    jobs: list[tuple[Loaded, tuple[str | int, ...], str, bool]] = []
    for it in metrics:
        for loc, f, _ in each(it.model, "formula"):
            jobs.append((it, loc + ("tex",), f.tex, True))
            jobs += [(it, loc + ("symbols", i, "tex"), s.tex, False) for i, s in enumerate(f.symbols)]
    jobs += [(it, ("formula",), it.model.formula, True) for it in glossary if it.model.formula]
    errors = []
    for it, loc, tex, _ in jobs:
        if m := _OPERATOR_SCRIPT.search(tex):
            errors.append(err(it.doc, loc, f"invalid LaTeX: '{m.group(0)}' renders as invalid MathML (an operator "
                                           f"in a sub/superscript); write \\mathrm{{{m.group(1)}}}"))
    math: dict[tuple[str, bool], str] = {}
    for (it, loc, tex, display), res in zip(jobs, render_many([(t, d) for _, _, t, d in jobs], cache), strict=True):
        if res.error is not None:
            errors.append(err(it.doc, loc, f"invalid LaTeX: {short_error(res.error)}"))
        else:
            math[(tex, display)] = res.html or ""
    return math, errors
