"""The one-page cheat-sheets, read back from the PDFs: one page of the right paper size, every key and short text
extractable (Vietnamese diacritics included), a CJK font embedded for Chinese and no .notdef glyph, nothing in the
margins, a clear build error instead of a second page, the links from the site, and Chromium's print preview."""

from __future__ import annotations

import functools
import io
import re
import shutil
import subprocess
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.pipeline import build_site, load_atlas
from generator.print.pdf import SheetDoesNotFit, html_to_pdf
from generator.render.sheet import SIZES, sheet_dir
from generator.render.view import View

from .conftest import ROOT, copy_cache, copy_sources, real_atlas

pypdf = pytest.importorskip("pypdf")

LATEST = "1.16"
PAPER_PT = {"a4": (841.89, 595.28), "letter": (792.0, 612.0)}  # landscape width x height
MARGIN_MM = 10


def sheets():
    """(line, trainer, language, metrics on the sheet) for every sheet the sources call for."""
    atlas = real_atlas()
    return [(e.line, t.id, lang, [r.metric for r in t.sheet()])
            for e in atlas.editions for lang in atlas.config.languages for t in e.trainers if t.sheet()]


def _id(p) -> str:
    return f"{p[0].name}-{p[1]}-{p[2].code}" + (f"-{p[4]}" if len(p) > 4 else "")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`pdf`: every PDF; `sheet`: every sheet (both sizes); `vi_sheet`, `zh_pdf`: those of one language;
    `latest_sheet`: those of the newest line; `lang`: every language."""
    docs = sheets()
    pdfs = [(line, t, lang, ms, size) for line, t, lang, ms in docs for size in SIZES]
    cases = {"pdf": pdfs, "sheet": docs, "vi_sheet": [s for s in docs if s[2].code == "vi"],
             "zh_pdf": [p for p in pdfs if p[2].code == "zh"], "latest_sheet": [s for s in docs if s[0].name == LATEST]}
    for name, values in cases.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, values, ids=_id)
    if "lang" in metafunc.fixturenames:
        metafunc.parametrize("lang", real_atlas().config.languages, ids=lambda lang: lang.code)


@pytest.fixture(scope="module")
def site(built_site) -> Path:
    return built_site


def _pdf(site: Path, version, trainer: str, lang, size: str) -> Path:
    return site / version.name / "cheatsheets" / f"{trainer}.{lang.code}.{size}.pdf"


@functools.cache
def _text(path: Path) -> str:
    """The PDF's text in the order it is drawn, read back by poppler (as pypdf reads it, 8x faster); once per PDF
    and process (several tests read each sheet)."""
    if not shutil.which("pdftotext"):
        pytest.fail("pdftotext is missing: `make setup` installs poppler-utils")
    out = subprocess.run(["pdftotext", "-raw", "-enc", "UTF-8", str(path), "-"], capture_output=True, check=True)
    return unicodedata.normalize("NFC", out.stdout.decode("utf-8"))


def _squash(text: str) -> str:
    return "".join(text.split())


def test_the_sources_put_metrics_on_every_trainers_sheet():
    found = sheets()
    assert found, "no metric has a `cheatsheet:` block"
    for edition in real_atlas().editions:
        for trainer in edition.trainers:
            ms = [m for v, t, _, ms in found if v == edition.line and t == trainer.id for m in ms]
            assert ms, f"no cheat-sheet metric for {trainer.id} in TRL {edition.line.name}"
    orders = [m.cheatsheet.order for m in found[0][3]]
    assert len(set(orders)) == len(orders) and 8 <= len(orders) <= 14


def test_every_sheet_is_one_page_of_its_paper(site, pdf):
    version, trainer, lang, _, size = pdf
    reader = pypdf.PdfReader(_pdf(site, version, trainer, lang, size))
    assert len(reader.pages) == 1
    box = reader.pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx(PAPER_PT[size], abs=1.0)


def _trainer_edition(version, trainer: str):
    """The trainer as the line's edition resolves it (its crucial defaults, its strip)."""
    edition = next(e for e in real_atlas().editions if e.line == version)
    return next(t for t in edition.trainers if t.id == trainer)


def test_every_key_short_text_version_and_language_is_extractable(site, sheet):
    version, trainer, lang, metrics = sheet
    defaults = [(c.option, d.value) for c, d in _trainer_edition(version, trainer).defaults if d.value is not None]
    assert defaults, f"{trainer} has no crucial setting with a default in TRL {version.trl}"
    for size in SIZES:
        text = _squash(_text(_pdf(site, version, trainer, lang, size)))
        for m in metrics:
            assert _squash(m.key) in text, f"{m.key} missing from the {lang.code} {size} sheet"
            short = re.sub(r"[`*]", "", m.cheatsheet.short.get(lang.code))
            assert _squash(short) in text, f"{m.key}: {lang.code} short text not extractable"
        assert _squash(f"TRL {version.trl}") in text and _squash(lang.name) in text  # the footer
        for option, value in defaults:  # the footer: the settings that change the curves, with this line's defaults
            assert _squash(f"{option}={value}") in text, f"{option}={value} missing from the {lang.code} {size} footer"


def test_vietnamese_diacritics_survive_extraction(site, vi_sheet):
    version, trainer, lang, metrics = vi_sheet
    text = _text(_pdf(site, version, trainer, lang, "a4"))
    words = {w for m in metrics for w in m.cheatsheet.short.get("vi").split() if not w.isascii()}
    # a short sheet (two curves of an old line) still has a dozen words with diacritics
    assert len(words) >= 10, words
    missing = [w for w in words if w.strip("`(),;:") not in text]
    assert not missing, missing
    # truncation and policy, as the term base writes them, wherever the sheet's sources use them
    te = _trainer_edition(version, trainer)
    sources = [te.trainer.strip.get("vi") if te.trainer.strip else ""]
    sources += [t.get("vi") for m in metrics for t in (m.cheatsheet.short, m.cheatsheet.first_try,
                                                      m.troubleshooting[0].actions[0]) if t is not None]
    terms = [t for t in ("cắt cụt", "chính sách") if t in " ".join(sources).lower()]
    assert all(t in text.lower() for t in terms), terms


def _cid_of(font):
    """code -> CID for a Type0 font: Identity-H, or the embedded CMap WeasyPrint writes for small subsets."""
    enc = font["/Encoding"]
    if enc == "/Identity-H":
        return lambda code: code
    data = enc.get_object().get_data().decode("latin-1")
    table: dict[int, int] = {}
    for block in re.findall(r"begincidchar(.*?)endcidchar", data, re.S):
        table |= {int(c, 16): int(cid) for c, cid in re.findall(r"<([0-9a-fA-F]+)>\s+(\d+)", block)}
    for block in re.findall(r"begincidrange(.*?)endcidrange", data, re.S):
        for lo, hi, cid in re.findall(r"<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s+(\d+)", block):
            table |= {c: int(cid) + c - int(lo, 16) for c in range(int(lo, 16), int(hi, 16) + 1)}
    return lambda code: table.get(code, -1)


def _raw(s) -> bytes:
    return s if isinstance(s, bytes) else getattr(s, "original_bytes", None) or s.encode("latin-1")


_TEXT_OBJECT = re.compile(rb"\bBT\b.*?\bET\b", re.S)


def _text_objects(page, reader):
    """The operations of the page's text objects (BT ... ET) only: pypdf reads every path of the formulas' SVG
    otherwise, eight times the bytes. WeasyPrint writes its strings in hex, so neither BT nor ET can hide in one; a
    font set outside a text object would be missed, so there must be none."""
    from pypdf.generic import ContentStream, DecodedStreamObject

    data = page.get_contents().get_data()
    objects = _TEXT_OBJECT.findall(data)
    assert sum(len(re.findall(rb"\bTf\b", o)) for o in objects) == len(re.findall(rb"\bTf\b", data))
    stream = DecodedStreamObject()
    stream.set_data(b"\n".join(objects))
    return ContentStream(stream, reader).operations


def notdef_glyphs(data: bytes) -> list[str]:
    """Every text-showing operation of the PDF that draws CID 0 (.notdef, the 'tofu' box), by font."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    found = []
    for page in reader.pages:
        fonts = {name: _cid_of(f.get_object()) for name, f in page["/Resources"]["/Font"].items()}
        names = {name: f.get_object()["/BaseFont"] for name, f in page["/Resources"]["/Font"].items()}
        current = None
        for operands, op in _text_objects(page, reader):
            if op == b"Tf":
                current = operands[0]
            elif op in (b"Tj", b"TJ", b"'", b'"'):
                strings = operands[0] if op == b"TJ" else operands[-1:]
                for s in strings:
                    if isinstance(s, (int, float)) or type(s).__name__ in ("FloatObject", "NumberObject"):
                        continue
                    raw = _raw(s)
                    codes = [int.from_bytes(raw[i:i + 2], "big") for i in range(0, len(raw) - 1, 2)]
                    if any(fonts[current](c) == 0 for c in codes):
                        found.append(str(names[current]))
    return found


def test_the_notdef_check_finds_tofu():
    # a character no installed font has: WeasyPrint draws .notdef without any error
    html = '<html lang="zh"><body style="font-family: \'Noto Sans CJK SC\'"><p>策略 \U0001F9EA ok</p></body></html>'
    from weasyprint import HTML

    assert notdef_glyphs(HTML(string=html).write_pdf())


def test_chinese_sheets_embed_a_subset_cjk_font_and_no_tofu(site, zh_pdf):
    version, trainer, lang, metrics, size = zh_pdf
    data = _pdf(site, version, trainer, lang, size).read_bytes()
    reader = pypdf.PdfReader(io.BytesIO(data))
    embedded = []
    for font in reader.pages[0]["/Resources"]["/Font"].values():
        font = font.get_object()
        desc = font["/DescendantFonts"][0].get_object()["/FontDescriptor"].get_object()
        assert any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3")), f"{font['/BaseFont']} not embedded"
        assert re.match(r"^/[A-Z]{6}\+", font["/BaseFont"]), f"{font['/BaseFont']} is not a subset"
        embedded.append(str(font["/BaseFont"]))
    assert any("CJK-SC" in name for name in embedded), embedded
    assert not notdef_glyphs(data)
    # a Chinese phrase of the sheet's first curve, extracted back from the PDF
    phrase = re.findall(r"[\u4e00-\u9fff]{3,}", metrics[0].cheatsheet.short.get("zh"))[0]
    assert phrase in re.sub(r"\s+", "", _text(_pdf(site, version, trainer, lang, size))), phrase  # across line wraps


def _gray_page(pdf: Path, dpi: int) -> tuple[int, int, bytes]:
    """The page rasterized by poppler as 8-bit grey (PGM): width, height, pixels."""
    if not shutil.which("pdftoppm"):
        pytest.fail("pdftoppm is missing: `make setup` installs poppler-utils")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-gray", "-r", str(dpi), "-singlefile", str(pdf), f"{tmp}/page"], check=True)
        pgm = Path(tmp, "page.pgm").read_bytes()
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", pgm)
    w, h = int(header.group(1)), int(header.group(2))
    return w, h, pgm[header.end():]


def test_nothing_is_printed_in_the_margins(site, pdf):
    version, trainer, lang, _, size = pdf
    dpi = 50
    w, h, px = _gray_page(_pdf(site, version, trainer, lang, size), dpi)
    band = int((MARGIN_MM - 1.5) / 25.4 * dpi)  # the margin, less a little for anti-aliasing
    assert not (inked := _ink_in_margins(w, h, px, band)), f"ink in the margin at {inked}"
    assert min(px) < 100  # the page is not blank


def _ink_in_margins(w: int, h: int, px: bytes, band: int) -> list[tuple[int, int]]:
    """The first few pixels (x, y) darker than 245 within ``band`` pixels of the page's edges, row by row: each row's
    part in the margin is read by C (`min`) before any of its pixels is looked at one by one."""
    found: list[tuple[int, int]] = []
    for y in range(h):
        spans = [(0, w)] if y < band or y >= h - band else [(0, min(band, w)), (max(w - band, band), w)]
        for x0, x1 in spans:
            if x1 > x0 and min(px[y * w + x0:y * w + x1]) < 245:
                found += [(x, y) for x in range(x0, x1) if px[y * w + x] < 245]
    return found[:5]


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 12), st.integers(3, 12), st.integers(0, 4), st.data())
def test_the_margin_scan_finds_what_a_pixel_by_pixel_scan_finds(w, h, band, data):
    px = bytes(data.draw(st.lists(st.sampled_from([0, 244, 245, 255]), min_size=w * h, max_size=w * h)))
    every = {(x, y) for y in range(h) for x in range(w)
             if (x < band or x >= w - band or y < band or y >= h - band) and px[y * w + x] < 245}
    found = _ink_in_margins(w, h, px, band)
    assert found == sorted(every, key=lambda xy: (xy[1], xy[0]))[:5]


def test_every_qr_code_is_the_page_of_a_key_on_the_sheet(site, latest_sheet):
    """Each image of the PDF, read back module by module (8 pixels each), is the QR code of the page of one row's
    key, and every row has one: the codes are images in the PDFs (an SVG path cost a seventh of a sheet's time).
    Every trainer's sheet of the newest line, in each language: the other lines' are made by the same code."""
    import segno

    from generator.render.sheet import sheet_rows

    version, trainer, lang, _ = latest_sheet
    atlas = real_atlas()
    edition = atlas.edition(version.name)
    urls = [r["url"] for r in sheet_rows(View(atlas, edition, lang), edition.trainer(trainer))]
    expected = {tuple(map(tuple, segno.make(u, error="m", micro=False).matrix)): u for u in urls}
    reader = pypdf.PdfReader(_pdf(site, version, trainer, lang, "a4"))
    found = []
    for name, image in _images(reader.pages[0]["/Resources"]):
        gray = image.convert("L")
        n = gray.width // 8
        assert gray.width == gray.height == 8 * n, name
        modules = tuple(tuple(int(gray.getpixel((8 * x + 4, 8 * y + 4)) < 128) for x in range(n)) for y in range(n))
        assert modules in expected, f"{name} is the code of no key's page"
        found.append(expected[modules])
    assert sorted(found) == sorted(urls)


def _images(resources) -> list:
    """Every image a page's resources hold, in form XObjects too, decoded (name, PIL image). WeasyPrint draws no
    inline image, so these are all the page's images; pypdf's `page.images` would parse the whole content stream
    for inline ones too (0.4 s a sheet)."""
    found = []
    for name, ref in (resources.get("/XObject") or {}).items():
        obj = ref.get_object()
        if obj["/Subtype"] == "/Image":
            found.append((str(name), obj.decode_as_image()))
        elif obj["/Subtype"] == "/Form" and "/Resources" in obj:
            found += _images(obj["/Resources"])
    return found


def test_each_formula_of_a_printed_sheet_has_its_own_glyph_ids(monkeypatch):
    """MathJax numbers glyph ids from 1 in every process, and the SVGs are cached one by one: two formulas of one
    sheet must still never share an id (a viewer would draw one formula's glyphs in the other). Flattened formulas
    have no ids left: here every formula stays as MathJax drew it, as one `svgflat` cannot read does."""
    from generator.print import svgflat
    from generator.print.pdf import pdf_tasks, sheet_documents

    monkeypatch.setattr(svgflat, "flat_or_same", lambda svg: svg)
    atlas = real_atlas()
    views = [View(atlas, atlas.edition(LATEST), lang) for lang in atlas.config.languages]
    _, jobs = sheet_documents(views)
    _, tasks = pdf_tasks([j for j in jobs if len(set(j.formulas)) > 1], None)
    assert tasks
    for job, svgs in tasks:
        ids = re.findall(r' id="([^"]+)"', job.document(svgs))
        assert ids and len(ids) == len(set(ids)), job.what
        assert "<!--atlas-formula-" not in job.document(svgs)


def test_a_formula_mathjax_refuses_is_one_line_naming_its_sheet():
    from generator.errors import BuildError
    from generator.print.mathsvg import formula_svgs

    where = "'grpo' (TRL 1.16, language en, a4)"
    with pytest.raises(BuildError) as exc:
        formula_svgs([r"\frac{a}{b}", r"x^{2"], None, {r"x^{2": where})
    assert str(exc.value) == (f"{where}: formula 'x^{{2': MathJax cannot typeset it: "
                              "Extra open brace or missing close brace")


def test_content_beyond_the_margins_is_an_error():
    html = ('<html><head><style>@page { size: A4 landscape; margin: 10mm }</style></head>'
            '<body><p style="white-space: nowrap">' + "overflow " * 200 + "</p></body></html>")
    with pytest.raises(SheetDoesNotFit, match="cut off"):
        html_to_pdf(html, "'grpo' (TRL 0.0, language en, a4)")


def test_a_sheet_too_long_for_one_page_fails_the_build_naming_trainer_version_and_language(tmp_path, site_cache):
    root = copy_sources(tmp_path / "src")
    copy_cache(root)  # formulas and English sheets from the cache when warm: the build stops at the first long sheet
    for path in (root / "metrics").rglob("*.yaml"):
        head, sep, block = path.read_text(encoding="utf-8").partition("\ncheatsheet:")
        if sep:  # every Vietnamese short text of the sheet becomes sixty words long
            short_vi = r"(\n  short:(?:\n    (?:en|zh): .*)*\n    vi: ).*"
            block = re.sub(short_vi, lambda m: m.group(1) + "nhiều chữ " * 60, block)
            path.write_text(head + sep + block, encoding="utf-8")
    site = tmp_path / "site"
    (site / "old").mkdir(parents=True)
    atlas = load_atlas(root, run_snippets=False)
    with pytest.raises(SheetDoesNotFit) as exc:
        build_site(root, site_dir=site, versions=[LATEST], langs=["en", "vi"], atlas=atlas)
    message = str(exc.value)
    assert "'grpo'" in message and f"TRL {LATEST}" in message and "language vi" in message
    assert "one page" in message
    assert [p.name for p in site.iterdir()] == ["old"]  # the failed build published nothing


def test_atlas_pdf_writes_only_the_sheets(tmp_path, capsys, site_cache):
    """What `atlas pdf` writes, after the shared site: its PDFs come from the cache the site's build filled (the
    engine's work is tested on every sheet of that site)."""
    from generator.cli import main

    out = tmp_path / "site"
    other = out / LATEST / "grpo" / "index.html"
    other.parent.mkdir(parents=True)
    other.write_text("untouched", encoding="utf-8")
    assert main(["--root", str(ROOT), "pdf", "--out", str(out), "--version", LATEST, "--lang", "vi"]) == 0
    files = sorted(p.relative_to(out / LATEST).as_posix() for p in out.rglob("*") if p.is_file() and p != other)
    made = [f for f in files if not f.startswith("assets/")]
    trainers = sorted({t for v, t, _, _ in sheets() if v.name == LATEST})
    expected = [f"cheatsheets/{t}.vi.{size}.pdf" for t in trainers for size in ("a4", "letter")]
    assert made == sorted(expected + [f"vi/cheatsheets/{t}/index.html" for t in trainers])
    assert other.read_text(encoding="utf-8") == "untouched"
    assert "assets/cheatsheet.css" in files and "assets/katex/katex.min.css" in files
    assert f"wrote {len(expected)} cheat-sheet PDFs" in capsys.readouterr().err


def _hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"#]+)"', html)


def test_the_trainer_index_and_the_cheatsheets_page_link_every_sheet(site, lang):
    prefix = lang.prefix
    for trainer in {t for v, t, _, _ in sheets() if v.name == LATEST}:
        targets = {f"{LATEST}/{sheet_dir(trainer, lang)}index.html"} | {
            f"{LATEST}/cheatsheets/{trainer}.{lang.code}.{size}.pdf" for size in SIZES}
        for page in (f"{LATEST}/{prefix}{trainer}/index.html", f"{LATEST}/{prefix}cheatsheets/index.html"):
            html = (site / page).read_text(encoding="utf-8")
            resolved = set()
            for href in _hrefs(html):
                if "://" not in href:
                    target = (site / page).parent / href
                    resolved.add((target / "index.html" if href.endswith("/") else target).resolve())
            for t in targets:
                assert (site / t).is_file() and (site / t).resolve() in resolved, f"{page} does not link {t}"
    home = (site / LATEST / prefix / "index.html").read_text(encoding="utf-8")
    title = real_atlas().ui[lang.code]["cheatsheets_title"]
    assert re.search(rf'href="[^"]*cheatsheets/"[^>]*>\s*(<[^>]+>\s*)*{re.escape(title)}', home), "not in the nav"


def test_the_printable_page_shows_the_formulas_with_build_time_katex(site):
    version, trainer, lang, metrics = next(s for s in sheets() if s[0].name == LATEST)
    html = (site / LATEST / sheet_dir(trainer, lang) / "index.html").read_text(encoding="utf-8")
    with_formula = [m for m in metrics if m.cheatsheet.show_formula]
    assert with_formula and html.count('class="katex-display"') == len(with_formula)
    assert "<script" not in html
    for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', html):
        assert (site / LATEST / sheet_dir(trainer, lang) / href).is_file(), href


@pytest.mark.browser
def test_chromium_print_preview_is_one_page(site, browser):
    context = browser.new_context()  # its own, closed even when a sheet fails: the browser serves the whole session
    try:
        page = context.new_page()
        for _, trainer, lang, _ in [s for s in sheets() if s[0].name == LATEST]:
            sheet = site / LATEST / sheet_dir(trainer, lang) / "index.html"
            page.goto(sheet.as_uri())
            page.wait_for_load_state("load")
            for paper in ("A4", "Letter"):
                pdf = page.pdf(format=paper, landscape=True, print_background=True)
                assert len(pypdf.PdfReader(io.BytesIO(pdf)).pages) == 1, f"{lang.code} {paper}"
            # the page's own print stylesheet (no paper forced): still one page
            assert len(pypdf.PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True))).pages) == 1
    finally:
        context.close()


def test_check_reports_a_taken_position_and_a_missing_strip(tmp_path):
    from generator.errors import SourceErrors

    root = copy_sources(tmp_path / "src")
    copy_cache(root)  # the formulas' KaTeX HTML: the rules under test run all the same
    path = root / "metrics/grpo/reward_std.yaml"
    text = path.read_text(encoding="utf-8")
    order = re.search(r"\ncheatsheet:\n  order: (\d+)\n", text)
    path.write_text(text.replace(order.group(0), "\ncheatsheet:\n  order: 1\n"), encoding="utf-8")
    trainer = root / "metrics/grpo/trainer.yaml"
    kept = trainer.read_text(encoding="utf-8").split("\nstrip:\n")
    tail = kept[1].split("\n", 3)[3]  # the strip's three languages go
    trainer.write_text(kept[0] + "\n" + tail, encoding="utf-8")
    with pytest.raises(SourceErrors) as exc:
        load_atlas(root, run_snippets=False)
    lines = [str(e) for e in exc.value.errors]
    line = text[: order.start()].count("\n") + 3  # the `order:` line
    assert f"metrics/grpo/reward_std.yaml:{line}: cheatsheet.order: cheat-sheet position 1 is taken " \
           "(also in metrics/grpo/reward.yaml)" in lines, lines
    assert any(re.fullmatch(r"metrics/grpo/trainer\.yaml:\d+: strip: the grpo cheat-sheet needs its 'read the "
                            r"curves in this order' strip", ln) for ln in lines), lines


def test_a_shortened_text_never_leaves_a_bracket_open():
    from generator.check.sheetfit import CELL
    from generator.render.sheet import _depth, shorten

    assert shorten("Lower lr; add a bonus (from 1.8.0: `entropy_coef`); try more.", 30) == "Lower lr"
    assert shorten("降低学习率；加入熵奖励（TRL 1.8.0 及以后：`entropy_coef`）；尝试别的。", 40) == "降低学习率"
    atlas = real_atlas()
    texts = [t for it in atlas.sources.metrics if it.model.cheatsheet
             for m in [it.model] + list(it.model.variants)
             for t in ([m.troubleshooting[0].actions[0]] if m.troubleshooting else [])
             + [f.text for f in (m.healthy.red_flags if m.healthy else [])]]
    assert len(texts) > 20
    for text in texts:
        for lang in atlas.config.lang_codes:
            short = shorten(text.get(lang), CELL)
            assert _depth(short) == 0, (lang, short)


def test_a_written_first_try_is_printed_as_is_and_per_release():
    """entropy's sheet entry names `entropy_coef` on the lines that have it; the 0.26 range has its own entry."""
    from generator.render.sheet import sheet_rows

    def action(line: str, lang: str) -> str:
        atlas = real_atlas()
        edition = atlas.edition(line)
        rows = sheet_rows(View(atlas, edition, atlas.config.language(lang)), edition.trainer("grpo"))
        return str(next(r["action"] for r in rows if r["key"] == "entropy"))

    assert action("1.16", "en") == "Lower the learning rate, or add an entropy bonus with <code>entropy_coef</code>"
    assert "entropy_coef" in action("1.12", "zh")
    old = action("0.26", "vi")
    assert "top_entropy_quantile=0.2" in old and "entropy_coef" not in old


def test_check_reports_a_first_try_too_wide_for_its_cell(tmp_path):
    from generator.errors import SourceErrors

    root = copy_sources(tmp_path / "src")
    copy_cache(root)  # the formulas' KaTeX HTML: the rules under test run all the same
    path = root / "metrics/grpo/entropy.yaml"
    text = path.read_text(encoding="utf-8")
    short = "    zh: 降低学习率，或用 `entropy_coef` 加入熵奖励\n"
    assert text.count(short) == 1
    path.write_text(text.replace(short, "    zh: " + "降低学习率" * 10 + "\n"), encoding="utf-8")
    with pytest.raises(SourceErrors) as exc:
        load_atlas(root, run_snippets=False)
    line = text[: text.index(short)].count("\n") + 1
    assert [str(e) for e in exc.value.errors] == [
        f"metrics/grpo/entropy.yaml:{line}: cheatsheet.first_try.zh: 100 columns; at most 90 fit the sheet's "
        "'first thing to try' cell"]


def test_a_rebuild_makes_only_the_pdfs_whose_content_changed(tmp_path, monkeypatch):
    """PDFs are kept by content: the same sheets again make no PDF (the engine would raise); a sheet whose HTML
    changed is made again. The engine is a stand-in that records what it is asked to make (the real one is tested
    on every sheet of the site)."""
    import generator.print.pdf as pdf

    made: list[str] = []

    def engine(html: str, what: str) -> bytes:
        made.append(what)
        return b"%PDF-1.7 " + html.encode()

    monkeypatch.setattr(pdf, "html_to_pdf", engine)
    monkeypatch.setattr(pdf, "run_parallel", lambda tasks: [fn(*args) for fn, args in tasks])  # `made` is ours
    atlas = real_atlas()
    views = [View(atlas, atlas.editions[0], atlas.config.default)]
    first = pdf.render_sheets(views, tmp_path)
    with_sheets = [t for t in atlas.editions[0].trainers if t.sheet()]
    assert len(made) == len(list(tmp_path.glob("*.pdf"))) == len(SIZES) * len(with_sheets)
    assert all(first[f"{atlas.editions[0].line.name}/{pdf.pdf_path(t.id, atlas.config.default.code, size)}"].startswith(
        b"%PDF") for t in with_sheets for size in SIZES)
    made.clear()
    assert pdf.render_sheets(views, tmp_path) == first and made == []
    monkeypatch.setattr(pdf, "render_sheet", lambda *a: "<html><body>changed</body></html>")
    pdf.render_sheets(views, tmp_path)
    assert len(made) == len(SIZES) * len(with_sheets)
