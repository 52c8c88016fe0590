"""No source can put a live tag, event handler or script link on a page: `atlas check` refuses HTML, script URLs and
attribute lists in text, and even text that got past it is escaped by the renderer (a metric page and a table
cell, through the real mkdocs build). The YAML loader never constructs Python objects."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from generator.check.atlas import Atlas
from generator.cli import main
from generator.pipeline import build_site, load_atlas
from generator.read.load import Loaded
from generator.read.text import Text
from generator.read.yamlsrc import parse
from generator.render.markdown import markdown_text
from generator.resolve.edition import editions

from .conftest import EXEMPLAR

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "![pic](javascript:alert(1))",
    "[click](javascript&#58;alert(1))",
    "<javascript:alert(1)>",
    '**x**{: onclick="alert(1)" }',
    "<!-- <script>alert(1)</script> -->",
    "<details open ontoggle=alert(1)>x</details>",
]


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text inside <script> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def _live_injections(html: str) -> list[str]:
    """What in ``html`` would run the payloads' `alert(1)`: a script element, an on* attribute, a script URL."""
    parser = _Tags()
    parser.feed(html)
    found = [f"<script>{s[:40]}" for s in parser.scripts if "alert(1)" in s]
    for tag, attrs in parser.tags:
        for name, value in attrs.items():
            if name.startswith("on") and "alert" in value:
                found.append(f"<{tag} {name}={value!r}>")
            if name in ("href", "src", "action", "formaction") and re.match(r"(?i)\s*(javascript|vbscript|data):",
                                                                          value):
                found.append(f"<{tag} {name}={value!r}>")
    return found


@pytest.mark.parametrize("payload", PAYLOADS)
def test_check_refuses_markup_in_text(mini_root, capsys, payload):
    path = mini_root / EXEMPLAR
    text = path.read_text(encoding="utf-8")
    m = re.search(r"(?<=^summary:\n)  en: .*$", text, re.M)
    quoted = "'" + ("Fraction " + payload).replace("'", "''") + "'"
    path.write_text(text[: m.start()] + "  en: " + quoted + text[m.end():], encoding="utf-8")
    assert main(["--root", str(mini_root), "check", "--no-snippets"]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln]
    line = text[: m.start()].count("\n") + 1
    assert len(lines) == 1 and lines[0].startswith(f"{EXEMPLAR}:{line}: summary.en: "), lines


def test_a_line_of_text_never_becomes_a_heading():
    """Python-Markdown makes a heading of any line that starts with '#', even without a space ("#3144)." in a
    sentence that wraps before an issue number): text fields cannot add headings to a page."""
    assert markdown_text("issues #3032,\n#3144).") == "issues #3032,\n\\#3144)."
    assert markdown_text("  # not a title, `#code` stays") == "  \\# not a title, `#code` stays"


def test_braces_after_a_term_link_keep_the_text_in_order():
    """A term link ends in an attribute list (`{ .atlas-term }`); a '}' later in the paragraph made Python-Markdown's
    attr_list move half the sentence to its end (the GAE glossary entry read "...; }'s one-step errors...")."""
    import html as htmllib

    import markdown

    text = markdown_text("the value function's errors V(s_{t+1}) − V(s_t), then `code`.")
    linked = text.replace("value function", '[value function](g.md "tip"){ .atlas-term }', 1)
    rendered = markdown.markdown(linked, extensions=["attr_list"])
    assert 'class="atlas-term"' in rendered
    assert htmllib.unescape(re.sub(r"<[^>]+>", "", rendered)) == \
        "the value function's errors V(s_{t+1}) − V(s_t), then code."


def test_markdown_text_keeps_markdown_and_escapes_markup():
    assert markdown_text("**bold**, *em*, `a < b & {c}`, [TRL](https://github.com/huggingface/trl)") == (
        "**bold**, *em*, `a < b & {c}`, [TRL](https://github.com/huggingface/trl)")
    assert markdown_text("x < y & z") == "x &lt; y & z"
    assert markdown_text("<b>x</b> &amp; {: .c}") == "&lt;b>x&lt;/b> &amp;amp; &#123;: .c&#125;"
    # a script link's destination becomes '#' (the rest of it stays as text); other links are left alone
    assert markdown_text("[a](javascript:alert(1)) [b](mailto:x@y.z) [c](../x.md)") == (
        "[a](#)) [b](mailto:x@y.z) [c](../x.md)")
    assert markdown_text("[a]: JavaScript:alert(1)") == "[a]: #)"


def test_renderer_escapes_text_the_validator_missed(mini_root):
    """Bypass the validator: put every payload into a metric's texts (page prose, a subtitle, table cells: the
    symbol table on its page and the summary column of the trainer index) and its snippet code, build the site
    with mkdocs, and look for anything live in the HTML. Markdown itself (bold, code, links) still renders."""
    atlas = load_atlas(mini_root)
    item = atlas.sources.metrics[0]
    m = item.model
    evil = " ".join(PAYLOADS) + " **bold** `x < y` [TRL](https://github.com/huggingface/trl)"
    langs = atlas.config.lang_codes

    def text(prefix: str) -> Text:
        return Text({lang: f"{prefix} {evil}" for lang in langs})

    symbols = [s.model_copy(update={"meaning": text("Symbol")}) for s in m.formula.symbols]
    snippet = m.snippet.model_copy(update={"code": m.snippet.code + "\n```\n<script>alert(1)</script>\n````\n"})
    tampered = m.model_copy(update={
        "title": text("Title"), "summary": text("Summary"), "meaning": text("Meaning"),
        "formula": m.formula.model_copy(update={"symbols": symbols}), "snippet": snippet})
    src = dataclasses.replace(atlas.sources, metrics=(Loaded(tampered, item.doc),))
    atlas = Atlas(src, editions(src.config, src.trainers, src.metrics, src.glossary), atlas.math)
    latest = atlas.config.versions[0].name
    site = build_site(mini_root, site_dir=mini_root / "site", versions=[latest], langs=["en"], atlas=atlas)

    page = (site / latest / m.trainer / m.slug / "index.html").read_text(encoding="utf-8")
    index = (site / latest / m.trainer / "index.html").read_text(encoding="utf-8")
    assert "Summary" in index and "Symbol" in page and "Meaning" in page
    assert _live_injections(page) == []
    assert _live_injections(index) == []
    assert "<strong>bold</strong>" in page and "<code>x &lt; y</code>" in page
    assert 'href="https://github.com/huggingface/trl"' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as text: in the prose and in the code block


DANGEROUS = [
    b"key: !!python/object/apply:os.system ['touch {marker}']\n",
    b"key: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n",
    b"!!python/object/apply:os.system ['touch {marker}']\n",
    b"key: !!python/name:os.system\n",
    b"key: !!python/module:os\n",
    b"!!python/name:os.system : x\n",
    b"key: [!!python/object/apply:os.system ['touch {marker}']]\n",
    b"key: !Custom x\n",
    b"key: !!binary dG91Y2g=\n",
]


@pytest.mark.parametrize("raw", DANGEROUS, ids=range(len(DANGEROUS)))
def test_loader_refuses_python_objects_and_runs_nothing(tmp_path: Path, raw: bytes):
    marker = tmp_path / "EXECUTED"
    doc, errors = parse("metrics/grpo/x.yaml", raw.replace(b"{marker}", str(marker).encode()))
    assert doc is None
    assert len(errors) == 1 and ("tag" in errors[0].message or "plain strings" in errors[0].message), errors
    assert not marker.exists()


def test_loader_does_not_expand_an_alias_bomb():
    levels = ["a: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
        f"{'b' * i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 12)]
    doc, errors = parse("metrics/grpo/x.yaml", "\n".join(levels).encode())
    assert doc is None
    assert [(e.line, e.field) for e in errors] == [(2, "b[0]")], errors
