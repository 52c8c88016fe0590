"""Text from the sources, safe to place in Markdown, and code in a fence it cannot close."""

from __future__ import annotations

import re

# Markdown passes raw HTML, attribute lists (`{: onclick=...}`) and links of any scheme through. Text fields are
# validated to hold none of them; they are also escaped here, so that text the validator missed still puts no live
# tag, attribute or script link on a page. `code`, **bold**, *emphasis* and [links](https://...) keep working.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK_DEST = re.compile(r"(\]\(\s*[<`]*|^[ ]{0,3}\[[^\]\n]+\]:\s*<?)([^\s)>]+)", re.M)
# a link may go to http(s), mailto or a plain relative path; anything else (a script URL, an entity) goes to '#'
_SAFE_DEST = re.compile(r"(?i)(https?://|mailto:)(?:[^\s&]|&(?!#?\w+;))*|[\w./#-]+")


def _safe_link(m: re.Match[str]) -> str:
    return m.group(1) + (m.group(2) if _SAFE_DEST.fullmatch(m.group(2)) else "#")


def _escape_prose(text: str) -> str:
    # braces as entities: '{' would open an attribute list, and a '}' after a term link's `{ .atlas-term }` makes
    # Python-Markdown's attr_list move text around
    text = re.sub(r"&(?=#?\w+;)", "&amp;", text).replace("<", "&lt;").replace("{", "&#123;").replace("}", "&#125;")
    # a '#' that starts a line would make a heading (Python-Markdown needs no space after it: "#3144)" is one)
    return re.sub(r"(?m)^([ \t]*)#", r"\1\\#", text)


# Ideographs, kana, hangul and full-width punctuation: a line break between two of them is no space in the text
# (sources wrap long Chinese lines), but a browser shows one, and `oneline` would write one
_WIDE = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
_WIDE_BREAK = re.compile(f"(?<=[{_WIDE}])[ \t]*\n[ \t]*(?=[{_WIDE}])")


def join_wide_lines(text: str) -> str:
    """``text`` without the single line breaks between two wide (CJK) characters; paragraphs stay apart."""
    return _WIDE_BREAK.sub("", text)


def markdown_text(text: str) -> str:
    """Source text, safe to place in Markdown: outside code spans no '<' (raw HTML, autolinks), no entity, no '{'
    (attribute lists), no '}', no heading, and no link other than to http(s), mailto or a relative path."""
    text = _LINK_DEST.sub(_safe_link, text)
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [_escape_prose(text[pos:m.start()]), m.group(0)]
        pos = m.end()
    return "".join(out) + _escape_prose(text[pos:])


def fenced(code: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any run of backticks in ``code``: the code cannot close it
    and go on as Markdown (or raw HTML)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    return f"{fence}{lang}\n{code}\n{fence}"


def oneline(text: object) -> str:
    return " ".join(str(text).split())


def cell(text: object) -> str:
    """Text for a Markdown table cell: one line, no '|' that would split the cell."""
    return oneline(text).replace("|", "\\|")
