"""MathJax's SVG of a formula redrawn flat for the PDF engine: every glyph that MathJax places with `<use>` inside
nested, translated and scaled groups becomes coordinates of one path, already transformed. WeasyPrint then cascades
styles over a handful of elements instead of hundreds and resolves no reference: a line's sheets are made in 0.85 of
the time (`benchmarks/pdf_time.py`). The drawing is the same: tests print both and compare the pixels.

Only what MathJax's TeX output uses is read (groups, `use`, paths with absolute commands, rectangles, text, scales
and translations); anything else leaves the SVG as MathJax wrote it (`Unsupported`)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import escape

_NS = "{http://www.w3.org/2000/svg}"
_HREF = ("{http://www.w3.org/1999/xlink}href", "href")
_TOKEN = re.compile(r"[A-Za-z]|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_CALL = re.compile(r"(\w+)\(([^)]*)\)")
_ARITY = {"M": 2, "L": 2, "T": 2, "Q": 4, "C": 6, "S": 4, "H": 1, "V": 1, "Z": 0}

Matrix = tuple[float, float, float, float, float, float]  # SVG's (a b c d e f); MathJax's have b = c = 0
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


class Unsupported(ValueError):
    """Something MathJax's TeX output does not use (or not yet): the SVG stays as it was."""


def _times(m: Matrix, n: Matrix) -> Matrix:
    """``m`` applied after ``n`` (both scales and translations)."""
    a, _, _, d, e, f = m
    a2, _, _, d2, e2, f2 = n
    return (a * a2, 0.0, 0.0, d * d2, a * e2 + e, d * f2 + f)


def _transform(attr: str | None) -> Matrix:
    m = _IDENTITY
    for name, args in _CALL.findall(attr or ""):
        v = [float(x) for x in _TOKEN.findall(args)]
        if name == "translate" and 1 <= len(v) <= 2:
            n = (1.0, 0.0, 0.0, 1.0, v[0], v[1] if len(v) == 2 else 0.0)
        elif name == "scale" and 1 <= len(v) <= 2:
            n = (v[0], 0.0, 0.0, v[-1], 0.0, 0.0)
        else:
            raise Unsupported(f"transform {name}({args})")
        m = _times(m, n)
    return m


def _num(x: float) -> str:
    """A coordinate in MathJax's units (a thousandth of an em) to a tenth: a thousandth of a point at 10 pt."""
    text = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def path_data(d: str, m: Matrix) -> str:
    """The absolute path ``d`` with ``m`` applied to every coordinate (the reflected control point of T and S stays
    right: reflection commutes with scales and translations)."""
    a, _, _, dd, e, f = m
    out: list[str] = []
    tokens = _TOKEN.findall(d)
    i, command = 0, ""
    while i < len(tokens):
        if tokens[i].isalpha():
            command = tokens[i]
            if command not in _ARITY:
                raise Unsupported(f"path command {command}")
            out.append(command)
            i += 1
            if command == "Z":
                continue
        elif not command or command == "Z":
            raise Unsupported("path data without a command")
        n = _ARITY[command]
        args = [float(x) for x in tokens[i:i + n]]
        if len(args) != n:
            raise Unsupported("path data ends inside a command")
        i += n
        if command == "H":
            coords = [a * args[0] + e]
        elif command == "V":
            coords = [dd * args[0] + f]
        else:
            coords = [a * v + e if k % 2 == 0 else dd * v + f for k, v in enumerate(args)]
        out.append(" ".join(_num(c) for c in coords))
    text: list[str] = []
    for part in out:  # "M28 -214Q28 -309 93 -378": a space only between two numbers
        text.append(part if part.isalpha() or not text or text[-1].isalpha() else " " + part)
    return "".join(text)


def _rect(el: ET.Element, m: Matrix) -> str:
    x, y, w, h = (float(el.get(k, 0)) for k in ("x", "y", "width", "height"))
    a, _, _, d, e, f = m
    (x0, x1), (y0, y1) = sorted((a * x + e, a * (x + w) + e)), sorted((d * y + f, d * (y + h) + f))
    return f'<rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(x1 - x0)}" height="{_num(y1 - y0)}"/>'


def _text(el: ET.Element, m: Matrix) -> str:
    attrs = "".join(f' {k}="{escape(v)}"' for k, v in el.attrib.items() if k != "transform")
    a, _, _, d, e, f = m
    return (f'<text transform="matrix({a:.6g} 0 0 {d:.6g} {_num(e)} {_num(f)})"{attrs}>'
            f"{escape(el.text or '')}</text>")


def flatten(svg: str) -> str:
    """``svg`` (MathJax's, for one formula) with the same drawing as one path per glyph orientation plus its rules
    and text; raises `Unsupported` for anything else."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as exc:
        raise Unsupported(f"not XML: {exc}") from None
    glyphs = {p.get("id"): p.get("d", "") for p in root.iter(f"{_NS}path") if p.get("id")}
    upright: list[str] = []
    mirrored: list[str] = []  # drawn with the opposite winding: kept apart so that overlaps never cancel
    rest: list[str] = []

    def walk(parent: ET.Element, m: Matrix) -> None:
        for el in parent:
            tag = el.tag.removeprefix(_NS)
            if tag == "defs":
                continue
            if el.get("fill", "currentColor") != "currentColor" or el.get("stroke", "currentColor") != "currentColor":
                raise Unsupported("a colour of its own")
            here = _times(m, _transform(el.get("transform")))
            if tag == "g":
                walk(el, here)
            elif tag in ("use", "path"):
                if tag == "use":
                    href = next((el.get(k) for k in _HREF if el.get(k)), "")
                    if href[1:] not in glyphs:
                        raise Unsupported(f"use of {href!r}")
                    here = _times(here, (1.0, 0.0, 0.0, 1.0, float(el.get("x", 0)), float(el.get("y", 0))))
                d = glyphs[href[1:]] if tag == "use" else el.get("d", "")
                (upright if here[0] * here[3] > 0 else mirrored).append(path_data(d, here))
            elif tag == "rect":
                rest.append(_rect(el, here))
            elif tag == "text":
                if len(el):
                    raise Unsupported("text with children")
                rest.append(_text(el, here))
            else:
                raise Unsupported(f"element {tag}")

    walk(root, _IDENTITY)
    head = re.match(r"<svg\b[^>]*>", svg)
    if head is None:
        raise Unsupported("no svg element")
    start = head.group(0).replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    paths = "".join(f'<path d="{" ".join(group)}"/>' for group in (upright, mirrored) if group)
    return f'{start}<g fill="currentColor" stroke="none">{paths}{"".join(rest)}</g></svg>'


def flat_or_same(svg: str) -> str:
    """``svg`` flattened, or as it is when it holds something `flatten` does not read."""
    try:
        return flatten(svg)
    except Unsupported:
        return svg
