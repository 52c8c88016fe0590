"""Cheat-sheet files of a version: the PDFs (WeasyPrint, fonts embedded and subset) and the site's printable HTML
pages. A sheet that needs a second page, or whose content leaves the page's margins, is an error, never a PDF."""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import cache as _cache
from ..build.docs import copy_katex
from ..errors import BuildError
from ..install import KATEX_DIST, PACKAGE
from ..render.sheet import SIZES, pdf_path, render_sheet, sheet_dir
from ..render.view import View
from ..workers import run_parallel

ASSETS = PACKAGE / "build" / "assets"  # the sheet's stylesheet, shared with the site's printable page
CSS = "cheatsheet.css"
_EPS = 0.5  # CSS px of tolerance for rounding in the layout


class SheetDoesNotFit(BuildError):
    """A sheet that would need more than one page, or whose content would be cut off at the page edge."""


def _boxes(box: Any):
    """The box and its descendants, except those clipped by it (`overflow: hidden`, `clip`), which cannot show."""
    yield box
    if box.style["overflow"] != "visible" or box.style["clip"]:
        return
    for child in getattr(box, "children", ()):
        yield from _boxes(child)


def outside_margins(page: Any) -> list[str]:
    """Descriptions of the layout boxes of a rendered WeasyPrint page that reach outside its content area."""
    pb = page._page_box
    left, top = pb.content_box_x(), pb.content_box_y()
    right, bottom = left + pb.width, top + pb.height
    bad = []
    for box in _boxes(pb):
        if box is pb or not hasattr(box, "border_box_x"):
            continue
        if box.style["visibility"] != "visible":
            continue
        x, y, w, h = box.border_box_x(), box.border_box_y(), box.border_width(), box.border_height()
        if w <= 0 or h <= 0:
            continue
        # the glyph boxes of inline text may be taller than their line (negative half-leading): for them only the
        # horizontal extent counts, their line box is checked vertically
        inline = type(box).__name__ in ("TextBox", "InlineBox")
        if x < left - _EPS or x + w > right + _EPS or (not inline and (y < top - _EPS or y + h > bottom + _EPS)):
            text = getattr(box, "text", None) or getattr(box, "element_tag", type(box).__name__)
            bad.append(f"{str(text)[:40]!r} at x={x:.0f}..{x + w:.0f}, y={y:.0f}..{y + h:.0f} px")
    return bad


@functools.cache
def _stylesheets() -> tuple[Any, list[Any]]:
    """The font configuration and stylesheets of every sheet, parsed once per process: KaTeX's stylesheet with
    its TrueType fonts only (decoding its WOFF2 fonts would take most of a sheet's time), and the sheet's own."""
    from weasyprint import CSS as Stylesheet
    from weasyprint.text.fonts import FontConfiguration

    fonts = FontConfiguration()
    katex = (KATEX_DIST / "katex.min.css").read_text(encoding="utf-8")
    katex = re.sub(r"src:url\(fonts/([\w-]+)\.woff2\)[^;}]*", r'src:url(fonts/\1.ttf) format("truetype")', katex)
    return fonts, [Stylesheet(string=katex, base_url=(KATEX_DIST / "katex.min.css").as_uri(), font_config=fonts),
                   Stylesheet(filename=str(ASSETS / CSS), font_config=fonts)]


# drop them while the interpreter still works: at shutdown, FontConfiguration.__del__ would call into a torn-down
# cffi module and print "Exception ignored" after every pytest run that built a sheet
atexit.register(_stylesheets.cache_clear)


def html_to_pdf(html: str, what: str) -> bytes:
    """One-page PDF of ``html``; raises SheetDoesNotFit naming ``what`` (trainer, version, language, paper)."""
    from weasyprint import HTML

    fonts, stylesheets = _stylesheets()
    doc = HTML(string=html, base_url=str(ASSETS) + "/").render(stylesheets=stylesheets, font_config=fonts)
    if len(doc.pages) != 1:
        raise SheetDoesNotFit(f"cheat-sheet {what} does not fit on one page ({len(doc.pages)} pages): shorten the "
                              "`cheatsheet.short` texts or the strip, or take metrics off the sheet")
    if bad := outside_margins(doc.pages[0]):
        raise SheetDoesNotFit(f"cheat-sheet {what}: content is cut off at the page margins: {bad[0]}")
    return doc.write_pdf()


@dataclass(frozen=True)
class PdfJob:
    """One PDF of a sheet: where it goes in the site, its HTML, and how an error names it."""

    path: str
    html: str
    what: str

    def key(self) -> str:
        """What the PDF depends on: the sheet's HTML, the stylesheets (KaTeX's and the sheet's) and the engine."""
        import weasyprint

        css = (ASSETS / CSS).read_bytes() + (KATEX_DIST / "katex.min.css").read_bytes()
        return _cache.key("sheet-pdf", self.html, hashlib.sha256(css).hexdigest(), weasyprint.__version__)


def sheet_documents(views: list[View]) -> tuple[dict[str, bytes], list[PdfJob]]:
    """Every sheet of ``views`` (one per line and language): the printable HTML pages, as files (path relative to
    the site root -> content), and the PDFs to make."""
    files: dict[str, bytes] = {}
    jobs: list[PdfJob] = []
    for view in views:
        line, lang = view.line.name, view.lang.code
        for trainer in view.edition.trainers:
            if not trainer.sheet():
                continue
            here = sheet_dir(trainer.id, view.lang)
            up = "../" * here.count("/")
            html = render_sheet(view, trainer, None, [f"{up}assets/katex/katex.min.css", f"{up}assets/{CSS}"])
            files[f"{line}/{here}index.html"] = html.encode()
            for size in SIZES:
                what = f"'{trainer.id}' (TRL {line}, language {lang}, {size})"
                # no stylesheet links: html_to_pdf gives every sheet the ones it parsed once
                jobs.append(PdfJob(f"{line}/{pdf_path(trainer.id, lang, size)}",
                                   render_sheet(view, trainer, size, []), what))
    return files, jobs


def cached_pdf(job: PdfJob, cache: Path | None) -> bytes | None:
    """The PDF of ``job`` made before from the same content, if ``cache`` (a folder) holds it."""
    path = cache / f"{job.key()}.pdf" if cache else None
    return path.read_bytes() if path and path.is_file() else None


def make_pdf(job: PdfJob, cache: Path | None) -> bytes:
    """The PDF of ``job`` (`SheetDoesNotFit` naming it), kept in ``cache`` by content."""
    data = html_to_pdf(job.html, job.what)
    if cache is not None:
        _write(cache / f"{job.key()}.pdf", data)
    return data


def render_sheets(views: list[View], cache: Path | None = None) -> dict[str, bytes]:
    """Every sheet file of ``views``, in memory: path relative to the site root -> content. A PDF whose content
    did not change since it was cached is not made again; the others are made on every core."""
    files, jobs = sheet_documents(views)
    todo = []
    for job in jobs:
        if (done := cached_pdf(job, cache)) is None:
            todo.append(job)
        else:
            files[job.path] = done
    made = run_parallel([(make_pdf, (job, cache)) for job in todo])
    files.update({job.path: pdf for job, pdf in zip(todo, made, strict=True)})
    return files


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sheet-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _copy_sheet_assets(dest: Path) -> None:
    """The stylesheets (and KaTeX fonts) that the printable pages of the version folder ``dest`` link to."""
    (dest / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copy2(ASSETS / CSS, dest / "assets" / CSS)
    if not (dest / "assets" / "katex" / "katex.min.css").is_file():
        copy_katex(dest / "assets" / "katex")


def write_files(files: dict[str, bytes], site: Path) -> list[Path]:
    """Write rendered sheets (see render_sheets) and the assets they link to into ``site``; nothing else."""
    for rel, data in files.items():
        _write(site / rel, data)
    for version in {rel.split("/", 1)[0] for rel in files}:
        _copy_sheet_assets(site / version)
    return [site / rel for rel in files]
