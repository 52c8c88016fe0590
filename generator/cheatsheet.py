"""Cheat-sheets: the metrics whose YAML has a `cheatsheet:` block -> one printable HTML page per trainer, language
and paper size (the PDF engine is in `pdf`), plus the site page that lists them. Never reads YAML."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup, escape

from .render import Ctx
from .sheetfit import CELL, width

# paper sizes of the PDFs: file-name part -> CSS `@page size` (the site's HTML sheet prints on either)
SIZES = {"a4": "A4 landscape", "letter": "letter landscape"}

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("generator", "templates"),
    undefined=jinja2.StrictUndefined,
    autoescape=True,
)
_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
# where a long text is cut for the sheet: the end of its first sentence or clause, outside inline code
_CLAUSE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.;:](?=\s)|[。；：]")
_MATHML = re.compile(r'<span class="katex-mathml">.*?</math></span>', re.S)


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


# paths relative to a version's root folder in the site
def sheet_dir(trainer: str, lang: str, default_lang: str) -> str:
    """Folder of the printable HTML sheet, e.g. ``zh/cheatsheets/grpo/``."""
    return f"{'' if lang == default_lang else lang + '/'}cheatsheets/{trainer}/"


def pdf_path(trainer: str, lang: str, size: str) -> str:
    return f"cheatsheets/{trainer}.{lang}.{size}.pdf"


def _rel(from_dir: str, to: str) -> str:
    rel = posixpath.relpath(to, from_dir or ".")
    return rel + "/" if to.endswith("/") and not rel.endswith("/") else rel


def sheet_items(ctx: Ctx, trainer: str) -> list[Any]:
    """The metrics of ``trainer`` on its sheet in ``ctx.version``, in reading order."""
    chosen = [ctx.resolved[it.model.id].metric for it in ctx.items(trainer)]
    return sorted((m for m in chosen if m.cheatsheet), key=lambda m: (m.cheatsheet.order, m.key))


def sheet_trainers(ctx: Ctx) -> list[str]:
    return [t for t in ctx.version.trainers if sheet_items(ctx, t)]


def sheet_links(ctx: Ctx, trainer: str, from_dir: str) -> dict[str, str] | None:
    """Hrefs, relative to the page at ``from_dir`` (a version-relative folder), of a trainer's sheets; None if
    the trainer has no sheet."""
    if not sheet_items(ctx, trainer):
        return None
    default = ctx.atlas.config.default_lang
    links = {"html": _rel(from_dir, sheet_dir(trainer, ctx.lang, default))}
    links |= {size: _rel(from_dir, pdf_path(trainer, ctx.lang, size)) for size in SIZES}
    return links


def _prefix(ctx: Ctx) -> str:
    """The language's folder inside a version ('' for the default language)."""
    return "" if ctx.lang == ctx.atlas.config.default_lang else f"{ctx.lang}/"


def page_url(ctx: Ctx, m: Any) -> str:
    """Absolute URL of a metric's page in this version and language."""
    return f"{ctx.atlas.config.site_url}{ctx.version.name}/{_prefix(ctx)}{m.trainer}/{m.slug}/"


def _breakable(path: str) -> Markup:
    """A key or URL that may wrap after its slashes (before breaking inside a word)."""
    return Markup("/<wbr>".join(escape(part) for part in path.split("/")))


def _qr_svg(url: str) -> Markup:
    import segno

    return Markup(segno.make(url, error="m", micro=False).svg_inline(scale=1, border=0, omitsize=True))


def _formula(ctx: Ctx, m: Any, mathml: bool) -> Markup:
    html = ctx.math(m.formula.tex, True)
    return Markup(html if mathml else _MATHML.sub("", html))


def _healthy(ctx: Ctx, m: Any) -> str:
    trend = ctx.t("trend_" + m.healthy.trend)
    return f"{ctx.bounds(m.healthy.range)} · {trend}" if m.healthy.range else trend


def first_try(m: Any) -> Any:
    """The sheet's "first thing to try": the entry's own text, else the first action of the first symptom."""
    return m.cheatsheet.first_try or m.troubleshooting[0].actions[0]


def sheet_rows(ctx: Ctx, trainer: str, mathml: bool = True) -> list[dict[str, Any]]:
    """The rows of a trainer's sheet; without ``mathml`` the formulas keep only KaTeX's visual HTML (for PDFs,
    where the hidden MathML would only add a font and noise to the extracted text)."""
    cfg = ctx.atlas.config
    here = sheet_dir(trainer, ctx.lang, cfg.default_lang)
    rows = []
    for n, m in enumerate(sheet_items(ctx, trainer), start=1):
        flag = m.healthy.red_flags[0] if m.healthy.red_flags else None
        url = page_url(ctx, m)
        rows.append({
            "n": n, "key": m.key, "key_html": _breakable(m.key), "url": url,
            "display_url": _breakable(url.split("://", 1)[-1]), "qr": _qr_svg(url),
            "href": _rel(here, f"{_prefix(ctx)}{m.trainer}/{m.slug}/"),
            "short": inline(ctx.text(m.cheatsheet.short)),
            "healthy": inline(_healthy(ctx, m)),
            "flag_when": inline(ctx.flag(flag)) if flag else "",
            "flag": inline(shorten(ctx.text(flag.text), CELL)) if flag else "",
            "action": inline(shorten(ctx.text(first_try(m)), CELL)),
            "formula": _formula(ctx, m, mathml) if m.cheatsheet.show_formula else None,
        })
    return rows


@dataclass(frozen=True)
class Sheet:
    trainer: str
    lang: str
    size: str | None  # a key of SIZES for a PDF; None for the site's printable page


def render_sheet(ctx: Ctx, sheet: Sheet, css: list[str]) -> str:
    """The complete HTML document of one sheet; ``css`` are the stylesheet URLs (relative or file://)."""
    cfg = ctx.atlas.config
    trainer = cfg.trainers[sheet.trainer]
    here = sheet_dir(sheet.trainer, ctx.lang, cfg.default_lang)
    prefix = _prefix(ctx)
    index_url = f"{cfg.site_url}{ctx.version.name}/{prefix}{sheet.trainer}/"
    return _ENV.get_template("cheatsheet.html.j2").render(
        t=ctx.t, lang=ctx.lang, version=ctx.version, cls=trainer.class_,
        rows=sheet_rows(ctx, sheet.trainer, mathml=sheet.size is None),
        strip=inline(ctx.t(f"cheatsheet_strip_{sheet.trainer}")), css=css,
        page_size=SIZES.get(sheet.size or "", "landscape"), paper=sheet.size,
        language=next(lang.name for lang in cfg.languages if lang.code == ctx.lang),
        index_url=index_url, index_href=_rel(here, f"{prefix}{sheet.trainer}/"),
        links=sheet_links(ctx, sheet.trainer, here), site_name=ctx.t("site_name"))


_MD_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("generator", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # Markdown output
)


def render_cheatsheets_page(ctx: Ctx) -> str:
    """The Markdown of the site page that lists every sheet of the version (``cheatsheets.md``)."""
    cfg = ctx.atlas.config
    here = f"{_prefix(ctx)}cheatsheets/"
    sheets = [{"class_": cfg.trainers[t].class_, "links": sheet_links(ctx, t, here),
               "count": len(sheet_items(ctx, t))} for t in sheet_trainers(ctx)]
    return _MD_ENV.get_template("cheatsheets.md.j2").render(
        t=ctx.t, version=ctx.version, sheets=sheets, edit_url=cfg.edit_base + f"locales/{ctx.lang}/ui.yaml")
