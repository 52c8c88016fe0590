"""Cheat-sheet files of a version: the PDFs (WeasyPrint, fonts embedded and subset, formulas drawn as MathJax's
SVG paths) and the site's printable HTML pages (formulas as KaTeX's HTML). A sheet that needs a second page, or
whose content leaves the page's margins, is an error, never a PDF."""

from __future__ import annotations

import atexit
import functools
import hashlib
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from .. import cache as _cache
from ..build.docs import copy_katex
from ..errors import BuildError
from ..install import PACKAGE
from ..render.sheet import SIZES, Figures, pdf_path, qr_png, render_sheet, sheet_dir
from ..render.view import View
from ..workers import run_parallel
from . import mathsvg

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
    """The font configuration and the sheet's stylesheet, parsed once per process."""
    from weasyprint import CSS as Stylesheet
    from weasyprint.text.fonts import FontConfiguration

    fonts = FontConfiguration()
    return fonts, [Stylesheet(filename=str(ASSETS / CSS), font_config=fonts)]


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


_SLOT = re.compile(r"<!--atlas-formula-(\d+)-->")


@dataclass(frozen=True)
class PdfJob:
    """One PDF of a sheet: where it goes in the site, its HTML with a slot for each of its formulas (their TeX in
    ``formulas``, in order), and how an error names it."""

    path: str
    html: str
    what: str
    formulas: tuple[str, ...] = ()

    def key(self) -> str:
        """What the PDF depends on: the sheet's HTML and formulas, its stylesheet and the engines."""
        import weasyprint

        css = hashlib.sha256((ASSETS / CSS).read_bytes()).hexdigest()
        return _cache.key("sheet-pdf", self.html, self.formulas, css, weasyprint.__version__, mathsvg.version())

    def document(self, svgs: Mapping[str, str]) -> str:
        """The HTML to print: each formula's slot filled with its SVG."""
        return _SLOT.sub(lambda m: svgs[self.formulas[int(m.group(1))]], self.html)


def _paper(formulas: list[str]) -> Figures:
    """A PDF's figures: QR codes as images, and a slot per formula (filled by `PdfJob.document`), its TeX noted
    in ``formulas``."""
    def slot(view: View, m: Any) -> Markup:
        formulas.append(m.formula.tex)
        return Markup(f'<div class="cs-math"><!--atlas-formula-{len(formulas) - 1}--></div>')
    return Figures(slot, qr_png)


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
                formulas: list[str] = []
                # no stylesheet links: html_to_pdf gives every sheet the one it parsed once
                html = render_sheet(view, trainer, size, [], _paper(formulas))
                jobs.append(PdfJob(f"{line}/{pdf_path(trainer.id, lang, size)}", html, what, tuple(formulas)))
    return files, jobs


def pdf_tasks(jobs: list[PdfJob], cache: Path | None) -> tuple[dict[str, bytes], list[tuple[PdfJob, dict[str, str]]]]:
    """The PDFs of ``jobs`` that ``cache`` holds (site path -> PDF), and the others with the SVGs of their formulas
    (made first, in one MathJax process), so that each is made as one task of `make_pdf`."""
    done, todo = {}, []
    for job in jobs:
        if (pdf := cached_pdf(job, cache)) is None:
            todo.append(job)
        else:
            done[job.path] = pdf
    where = {tex: job.what for job in reversed(todo) for tex in job.formulas}
    svgs = mathsvg.formula_svgs([tex for job in todo for tex in job.formulas], cache, where)
    return done, [(job, {tex: svgs[tex] for tex in job.formulas}) for job in todo]


def cached_pdf(job: PdfJob, cache: Path | None) -> bytes | None:
    """The PDF of ``job`` made before from the same content, if ``cache`` (a folder) holds it."""
    path = cache / f"{job.key()}.pdf" if cache else None
    return path.read_bytes() if path and path.is_file() else None


def make_pdf(job: PdfJob, cache: Path | None, svgs: Mapping[str, str]) -> bytes:
    """The PDF of ``job``, its formulas drawn from ``svgs`` (TeX -> SVG), kept in ``cache`` by content
    (`SheetDoesNotFit` naming it)."""
    data = html_to_pdf(job.document(svgs), job.what)
    if cache is not None:
        _cache.write_atomic(cache / f"{job.key()}.pdf", data)
    return data


def render_sheets(views: list[View], cache: Path | None = None) -> dict[str, bytes]:
    """Every sheet file of ``views``, in memory: path relative to the site root -> content. A PDF whose content
    did not change since it was cached is not made again; the others are made on every core."""
    files, jobs = sheet_documents(views)
    done, tasks = pdf_tasks(jobs, cache)
    made = run_parallel([(make_pdf, (job, cache, svgs)) for job, svgs in tasks])
    return files | done | {job.path: pdf for (job, _), pdf in zip(tasks, made, strict=True)}


def _copy_sheet_assets(dest: Path) -> None:
    """The stylesheets (and KaTeX fonts) that the printable pages of the version folder ``dest`` link to."""
    (dest / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copy2(ASSETS / CSS, dest / "assets" / CSS)
    if not (dest / "assets" / "katex" / "katex.min.css").is_file():
        copy_katex(dest / "assets" / "katex")


def write_files(files: dict[str, bytes], site: Path) -> list[Path]:
    """Write rendered sheets (see render_sheets) and the assets they link to into ``site``; nothing else."""
    for rel, data in files.items():
        _cache.write_atomic(site / rel, data)
    for version in {rel.split("/", 1)[0] for rel in files}:
        _copy_sheet_assets(site / version)
    return [site / rel for rel in files]
