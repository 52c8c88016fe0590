"""The link checker's page reader (tests/linkcheck.py, regular expressions) finds exactly the links and ids that
Python's HTML parser finds, on tricky markup and on the pages of one trainer in one language of the built site."""

from __future__ import annotations

import html.parser

import pytest

from .linkcheck import parse_page


class _Reference(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for name in ("id", "name"):
            if a.get(name):
                self.ids.add(a[name])  # type: ignore[arg-type]
        for name in ("href", "src"):
            value = a.get(name)
            if value and not value.startswith(("data:", "javascript:", "mailto:", "blob:")):
                self.links.append(value)


def reference(page: str) -> tuple[list[str], set[str]]:
    parser = _Reference()
    parser.feed(page)
    parser.close()
    return parser.links, parser.ids


TRICKY = [
    '<a href="a/b/?x=1&amp;y=2#f">x</a><img src=plain.png alt=x><p id=\'single\'>',
    '<!-- <a href="commented/"> --><a HREF="Upper/" ID="Up">',
    '<script src="s.js"></script><script>var a = "<a href=\\"in-script/\\">";</script><style>a{}</style>',
    '<a href="data:x"><a href="javascript:y()"><a href="mailto:z@x"><a href="">empty</a><a href>bare</a>',
    '<code>&lt;a href="escaped/"&gt;</code><input name="q" value="a > b"><br/><a\nhref="wrapped/"\n>w</a>',
    '<link rel="canonical" href="http://127.0.0.1:8000/1.16/"><span class="katex"><span id="k-1">x</span></span>',
]


@pytest.mark.parametrize("page", TRICKY)
def test_tricky_markup(page):
    assert parse_page(page) == reference(page)


def test_every_page_of_a_trainer_in_a_language(built_site):
    vi = built_site / "1.16" / "vi"
    pages = [vi / "index.html", vi / "glossary" / "index.html", *(vi / "grpo").rglob("*.html")]
    assert len(pages) > 30
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert parse_page(text) == reference(text), path
