"""The cheat-sheets' formulas drawn flat (`print.svgflat`): a sheet's formulas print the same pixels as MathJax's own
SVG, and what the flattening does not read is left as MathJax drew it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.print import mathsvg, svgflat
from generator.print.pdf import html_to_pdf

from .conftest import real_atlas

LATEST = "1.16"


def _formulas() -> list[str]:
    """Display formulas of the newest line: a long one, fractions (rules drawn as rectangles), sub- and
    superscripts (scaled glyphs), and the first with text MathJax draws as text, if any."""
    edition = real_atlas().edition(LATEST)
    texs = sorted({r.metric.formula.tex for t in edition.trainers for r in t.metrics if r.metric.formula})
    picked = [max(texs, key=len)] + [t for t in texs if r"\frac" in t][:2] + [t for t in texs if "^" in t][:1]
    return list(dict.fromkeys(picked + [t for t in texs if r"\text" in t][:1]))


def _raster(pdf: bytes, folder: Path, name: str) -> tuple[int, int, bytes]:
    """The PDF's page rasterized by poppler at 150 dpi in grey levels: width, height, one byte per pixel."""
    if not shutil.which("pdftoppm"):
        pytest.fail("pdftoppm is missing: `make setup` installs poppler-utils")
    src = folder / f"{name}.pdf"
    src.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "150", "-gray", "-singlefile", str(src), str(folder / name)], check=True)
    header, size, _, data = (folder / f"{name}.pgm").read_bytes().split(b"\n", 3)
    assert header == b"P5"
    w, h = map(int, size.split())
    return w, h, data


def _pixels(raster: tuple[int, int, bytes], below: int) -> set[tuple[int, int]]:
    w, _, data = raster
    return {(i % w, i // w) for i, v in enumerate(data) if v < below}


def _unmatched(dark: set[tuple[int, int]], marked: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The dark pixels with no marked pixel of the other drawing within one pixel. Marked is any grey: a rule thinner
    than a pixel falls on the pixel grid differently when the same rectangle comes with another transformation
    (drawn at 600 dpi, the two match pixel for pixel)."""
    return {(x, y) for x, y in dark if not any((x + dx, y + dy) in marked for dx in (-1, 0, 1) for dy in (-1, 0, 1))}


def test_flat_formulas_print_the_same_pixels_as_mathjax_svg(tmp_path, monkeypatch):
    candidates = _formulas()
    flat = mathsvg.formula_svgs(candidates, None, {})
    monkeypatch.setattr(svgflat, "flat_or_same", lambda svg: svg)
    drawn = mathsvg.formula_svgs(candidates, None, {})
    texs = [t for t in candidates if "<use" not in flat[t]]
    assert len(texs) >= 3 and all("<use" in drawn[t] for t in texs), "the formulas should be flattened"
    assert any("<rect" in flat[t] for t in texs), "no fraction rule among the formulas"

    def page(svgs: dict[str, str]) -> bytes:
        body = "".join(f'<div class="cs-math">{svgs[t]}</div>' for t in texs)
        return html_to_pdf(f"<!doctype html><html><body>{body}</body></html>", "the flattening test")

    before, after = _raster(page(drawn), tmp_path, "mathjax"), _raster(page(flat), tmp_path, "flat")
    assert before[:2] == after[:2] and len(_pixels(before, 128)) > 2000
    assert not _unmatched(_pixels(before, 128), _pixels(after, 250))
    assert not _unmatched(_pixels(after, 128), _pixels(before, 250))


_coord = st.integers(-2000, 2000)


@given(st.lists(st.tuples(st.sampled_from("MLQTHV"), st.lists(_coord, min_size=6, max_size=6)), min_size=1,
                max_size=12),
       st.sampled_from([1.0, -1.0, 0.707, 0.5]), st.sampled_from([1.0, -1.0, 0.707]), _coord, _coord)
def test_path_coordinates_are_mapped_one_by_one(commands, sx, sy, tx, ty):
    """Each x (y) of an absolute path becomes sx·x + tx (sy·y + ty); H takes an x, V a y; commands are kept."""
    arity = {"M": 2, "L": 2, "T": 2, "Q": 4, "H": 1, "V": 1}
    d = "M0 0" + "".join(c + " ".join(str(v) for v in vals[:arity[c]]) for c, vals in commands) + "Z"
    out = svgflat.path_data(d, (sx, 0.0, 0.0, sy, float(tx), float(ty)))
    tokens = svgflat._TOKEN.findall(out)
    assert [t for t in tokens if t.isalpha()] == ["M"] + [c for c, _ in commands] + ["Z"]
    expected: list[float] = [tx, ty]
    for c, vals in commands:
        for k, v in enumerate(vals[:arity[c]]):
            is_x = c == "H" or (c != "V" and k % 2 == 0)
            expected.append(sx * v + tx if is_x else sy * v + ty)
    got = [float(t) for t in tokens if not t.isalpha()]
    assert got == pytest.approx(expected, abs=0.051)


@pytest.mark.parametrize("svg", [
    '<svg xmlns="http://www.w3.org/2000/svg"><g transform="rotate(30)"><path d="M0 0L1 1Z"/></g></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><path d="m0 0l1 1z"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><g fill="red"><path d="M0 0L1 1Z"/></g></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><svg x="1"><path d="M0 0L1 1Z"/></svg></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0A1 1 0 0 1 2 2Z"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0L1',
], ids=["rotation", "relative", "colour", "nested-svg", "arc", "not-xml"])
def test_what_the_flattening_does_not_read_stays_as_mathjax_drew_it(svg):
    with pytest.raises(svgflat.Unsupported):
        svgflat.flatten(svg)
    assert svgflat.flat_or_same(svg) == svg
