"""Cheat-sheets: a trainer's metrics with a `cheatsheet:` block, as one printable HTML page per language and paper
size (the PDF engine is in `print`), and the site page that lists them. Never reads YAML."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from ..check.sheetfit import CELL, width
from ..resolve.edition import TrainerEdition
from . import paths
from .env import HTML, MARKDOWN
from .view import View

# paper sizes of the PDFs: file-name part -> CSS `@page size` (the site's HTML sheet prints on either)
SIZES = {"a4": "A4 landscape", "letter": "letter landscape"}

_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
# where a long text is cut for the sheet: the end of its first sentence or clause, outside inline code
_CLAUSE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.;:](?=\s)|[。；：]")


def inline(text: str) -> Markup:
    """One-line Markdown (`code`, **bold**) as safe HTML; text fields are validated to hold no HTML."""
    parts = _CODE.split(" ".join(text.split()))
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{escape(part)}</code>")
        else:
            out.append(_BOLD.sub(r"<strong>\1</strong>", str(escape(part))))
    return Markup("".join(out))


def _depth(text: str) -> int:
    """How many brackets are open at the end of ``text``: a cut there would leave one unclosed."""
    return sum(text.count(c) for c in "(（[") - sum(text.count(c) for c in ")）]")


def shorten(text: str, budget: int) -> str:
    """The text's first clauses (cut at '.', ';' or ':' outside `code` and brackets) as long as they fit
    ``budget`` (see ``sheetfit.width``), always at least the first one, without the final punctuation."""
    text = " ".join(text.split())
    masked = _CODE.sub(lambda m: "x" * len(m.group(0)), text)
    ends = [m.start() for m in _CLAUSE_END.finditer(masked) if _depth(masked[:m.start()]) == 0] + [len(text)]
    cut = ends[0]
    for end in ends[1:]:
        if width(text[:end]) > budget:
            break
        cut = end
    return text[:cut].rstrip(".。;；:： ")


def sheet_dir(trainer: str, lang: Any) -> str:
    """Folder of the printable HTML sheet inside a line, e.g. ``zh/cheatsheets/grpo/``."""
    return f"{lang.prefix}cheatsheets/{trainer}/"


def pdf_path(trainer: str, lang: str, size: str) -> str:
    return f"cheatsheets/{trainer}.{lang}.{size}.pdf"


def sheet_links(view: View, trainer: TrainerEdition, from_dir: str) -> dict[str, str] | None:
    """Hrefs, relative to the page at ``from_dir`` (a folder inside the line), of a trainer's sheets; None if the
    trainer has no sheet."""
    if not trainer.sheet():
        return None
    links = {"html": paths.rel_dir(from_dir, sheet_dir(trainer.id, view.lang))}
    links |= {size: paths.rel_dir(from_dir, pdf_path(trainer.id, view.lang.code, size)) for size in SIZES}
    return links


def _breakable(path: str) -> Markup:
    """A key or URL that may wrap after its slashes (before breaking inside a word)."""
    return Markup("/<wbr>".join(escape(part) for part in path.split("/")))


@functools.lru_cache(maxsize=1024)
def _qr(url: str) -> Any:
    """The QR code of ``url``, made once per process: each sheet is printed on two papers and shown as a page, and
    segno tries all eight masks of every code (2,043 codes took about 20 s of a build's serial start)."""
    import segno

    return segno.make(url, error="m", micro=False)


@functools.lru_cache(maxsize=1024)
def qr_svg(url: str) -> Markup:
    """The QR code as inline SVG, for the site's printable page."""
    return Markup(_qr(url).svg_inline(scale=1, border=0, omitsize=True))


@functools.lru_cache(maxsize=1024)
def qr_png(url: str) -> Markup:
    """The QR code as a PNG image of 8 pixels per module (sharp even where a viewer smooths it), for the PDFs: the
    PDF engine parses an SVG path in Python, which took about a seventh of a sheet's time."""
    return Markup(f'<img alt="" src="{_qr(url).png_data_uri(scale=8, border=0)}">')


@dataclass(frozen=True)
class Figures:
    """How a sheet draws its figures: a metric's formula, and the QR code of a URL. The site's printable page
    uses `SCREEN`; the PDFs their own (see `print.pdf`)."""

    formula: Callable[[View, Any], Markup]
    qr: Callable[[str], Markup]


SCREEN = Figures(lambda view, m: Markup(view.math_html(m.formula.tex, True)), qr_svg)


def _healthy(view: View, m: Any) -> str:
    trend = view.t("trend_" + m.healthy.trend)
    return f"{view.bounds(m.healthy.range)} · {trend}" if m.healthy.range else trend


def first_try(m: Any) -> Any:
    """The sheet's "first thing to try": the entry's own text, else the first action of the first symptom."""
    return m.cheatsheet.first_try or m.troubleshooting[0].actions[0]


def sheet_rows(view: View, trainer: TrainerEdition, figures: Figures = SCREEN) -> list[dict[str, Any]]:
    """The rows of a trainer's sheet, their formulas and QR codes drawn by ``figures``."""
    here = sheet_dir(trainer.id, view.lang)
    rows = []
    for n, res in enumerate(trainer.sheet(), start=1):
        m = res.metric
        flag = m.healthy.red_flags[0] if m.healthy.red_flags else None
        page = paths.folder(paths.metric_doc(m))
        url = view.url(page)
        rows.append({
            "n": n, "key": m.key, "key_html": _breakable(m.key), "url": url,
            "display_url": _breakable(url.split("://", 1)[-1]), "qr": figures.qr(url),
            "href": paths.rel_dir(here, view.lang.prefix + page),
            "short": inline(view.text(m.cheatsheet.short)),
            "healthy": inline(_healthy(view, m)),
            "flag_when": inline(view.flag(flag, full=False)) if flag else "",
            "flag": inline(shorten(view.text(flag.text), CELL)) if flag else "",
            "action": inline(shorten(view.text(first_try(m)), CELL)),
            "formula": figures.formula(view, m) if m.cheatsheet.show_formula else None,
        })
    return rows


def render_sheet(view: View, trainer: TrainerEdition, size: str | None, css: list[str],
                 figures: Figures = SCREEN) -> str:
    """The complete HTML document of one sheet; ``css`` are the stylesheet URLs (relative or file://)."""
    here = sheet_dir(trainer.id, view.lang)
    index = view.lang.prefix + f"{trainer.id}/"
    settings = [f"{c.option}={d.value}" for c, d in trainer.defaults if d.value is not None]
    return HTML.get_template("cheatsheet.html.j2").render(
        t=view.t, lang=view.lang.code, version=view.line, cls=trainer.cls.name,
        rows=sheet_rows(view, trainer, figures),
        strip=inline(view.text(trainer.trainer.strip)), css=css, settings=settings,
        settings_label=inline(view.t("cheatsheet_settings", config=trainer.cls.config, trl=view.line.trl)),
        page_size=SIZES.get(size or "", "landscape"), paper=size, language=view.lang.name,
        index_url=view.url(f"{trainer.id}/"), index_href=paths.rel_dir(here, index),
        links=sheet_links(view, trainer, here), site_name=view.t("site_name"))


def render_cheatsheets_page(view: View) -> str:
    """The Markdown of the site page that lists every sheet of the line (``cheatsheets.md``)."""
    here = f"{view.lang.prefix}cheatsheets/"
    sheets = [{"class_": t.cls.name, "links": sheet_links(view, t, here), "count": len(t.sheet())}
              for t in view.edition.trainers if t.sheet()]
    return MARKDOWN.get_template("cheatsheets.md.j2").render(
        t=view.t, version=view.line, sheets=sheets, edit_url=view.edit_url(f"locales/{view.lang.code}/ui.yaml"))


def has_sheets(view: View) -> bool:
    return any(t.sheet() for t in view.edition.trainers)
