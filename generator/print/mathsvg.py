"""TeX -> SVG with MathJax (npm), for the cheat-sheet PDFs only: WeasyPrint draws a formula's paths in a fraction
of the time it takes to lay out KaTeX's HTML (the site's pages keep KaTeX). Formulas are checked by KaTeX before
any build; one that MathJax alone refuses is a build error naming its sheet and its TeX."""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

from .. import cache as _cache
from ..errors import BuildError
from ..install import MATHJAX
from . import svgflat

_SCRIPT = Path(__file__).with_name("mathjax_svg.js")
_IDS = re.compile(r"\bMJX-\d+-")  # MathJax numbers each formula's glyph ids per process: 1, 2, ... in every run
_NOISE = re.compile(r' data-mml-node="[^"]*"|<title>[^<]*</title>')
# MathJax sizes the SVG in ex of *its* font (x-height 0.442 em); the PDF engine would read ex off the sheet's font
_SIZE = re.compile(r'<svg style="vertical-align: [^"]*" (.*?)width="[^"]*" height="[^"]*" (.*?)viewBox="(\S+) (\S+) '
                   r'(\S+) (\S+)"')


def _in_em(svg: str) -> str:
    """The SVG sized in em (of the formula's font size) from its viewBox, in thousandths of an em."""
    def size(m: re.Match[str]) -> str:
        w, h = float(m.group(5)) / 1000, float(m.group(6)) / 1000
        return (f'<svg {m.group(1)}width="{w:.3f}em" height="{h:.3f}em" {m.group(2)}'
                f'viewBox="{m.group(3)} {m.group(4)} {m.group(5)} {m.group(6)}"')
    sized, n = _SIZE.subn(size, svg, count=1)
    if n != 1:
        raise BuildError("MathJax's SVG has no size and viewBox where expected: was mathjax-full upgraded?")
    return sized


@functools.cache
def version() -> str:
    """What an SVG depends on besides its TeX: MathJax's version, and this module, its script and the flattening
    (post-processing included)."""
    try:
        mathjax = json.loads((MATHJAX / "package.json").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        mathjax = "unknown"
    code = hashlib.sha256(Path(__file__).read_bytes() + _SCRIPT.read_bytes()
                          + Path(svgflat.__file__).read_bytes()).hexdigest()[:16]
    return f"{mathjax}+{code}"


def _key(tex: str) -> str:
    return _cache.key("mathjax-svg", tex, version())


def formula_svgs(texs: list[str], cache: Path | None, where: dict[str, str]) -> dict[str, str]:
    """Each display formula of ``texs`` as an inline SVG element, made by one MathJax process for those that
    ``cache`` (a folder) does not hold yet. A formula MathJax refuses raises `BuildError`, one line per formula
    naming ``where[tex]`` (the first sheet that shows it)."""
    out: dict[str, str] = {}
    missing = []
    for tex in dict.fromkeys(texs):
        path = cache / f"{_key(tex)}.svg" if cache else None
        if path and path.is_file():
            out[tex] = path.read_text(encoding="utf-8")
        else:
            missing.append(tex)
    errors = []
    for tex, res in zip(missing, _run_mathjax(missing), strict=True):
        if "error" in res:
            errors.append(f"{where.get(tex, 'cheat-sheet')}: formula {tex!r}: MathJax cannot typeset it: "
                          f"{res['error']}")
            continue
        # ids unique to the formula, so that two formulas of one sheet never share a glyph id (in an SVG that stays
        # as MathJax drew it), then drawn flat
        svg = svgflat.flat_or_same(_in_em(_IDS.sub(f"f{_key(tex)[:10]}-", _NOISE.sub("", res["svg"]))))
        out[tex] = svg
        if cache is not None:
            _cache.write_atomic(cache / f"{_key(tex)}.svg", svg.encode())
    if errors:
        raise BuildError("\n".join(errors))
    return out


def _run_mathjax(texs: list[str]) -> list[dict[str, str]]:
    if not texs:
        return []
    node = shutil.which("node")
    if node is None or not MATHJAX.is_dir():
        raise BuildError("MathJax is not installed: run `make setup` (needs node and `npm ci`)")
    proc = subprocess.run([node, str(_SCRIPT)], input=json.dumps(texs), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"MathJax failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    return json.loads(proc.stdout)
