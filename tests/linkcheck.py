"""A link and fragment checker for the built site, over HTTP: every internal href/src of every page reachable from the
site root must answer 200, and every #fragment must name an element of the target page."""

from __future__ import annotations

import html
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlparse

# what a browser does not read as markup: comments, and the text of scripts and styles
_OPAQUE = re.compile(r"<!--.*?-->|<(script|style)\b[^>]*>.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<[A-Za-z][^\s/>]*((?:\s+[^\s=/>]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*)\s*/?>")
_ATTR = re.compile(r"([^\s=/>]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+)))?")
_SKIPPED = ("data:", "javascript:", "mailto:", "blob:")


def parse_page(page: str) -> tuple[list[str], set[str]]:
    """The links (every href and src, in order) and the ids (id and name attributes) of an HTML page. Regular
    expressions over the tags: the site's 3,000 pages hold 300 MB of HTML, and html.parser took 80 s to read them
    (test_linkcheck holds it to the same answers)."""
    links: list[str] = []
    ids: set[str] = set()
    for tag in _TAG.finditer(_OPAQUE.sub(lambda m: m.group(0)[:m.group(0).index(">") + 1] if m.group(1) else "",
                                         page)):
        for m in _ATTR.finditer(tag.group(1)):
            name = m.group(1).lower()
            if name not in ("id", "name", "href", "src"):
                continue
            value = html.unescape(next((v for v in m.group(2, 3, 4) if v is not None), ""))
            if not value:
                continue
            if name in ("id", "name"):
                ids.add(value)
            elif not value.startswith(_SKIPPED):
                # a link element's rel=alternate/canonical points at the public URL, checked like any other
                links.append(value)
    return links, ids


@dataclass
class Report:
    pages: int = 0
    links: int = 0
    broken: list[str] = field(default_factory=list)
    external: set[str] = field(default_factory=set)


def check_site(base: str, public: str, starts: list[str], limit: int = 20000) -> Report:
    """Crawl from ``starts`` (paths) on the server at ``base``; links to ``public`` (the site_url host) count as
    internal and are checked on the local server."""
    report = Report()
    status: dict[str, int] = {}
    ids: dict[str, set[str]] = {}
    queue = [urljoin(base, s) for s in starts]
    seen = set(queue)
    local, pub = urlparse(base), urlparse(public)

    def fetch(url: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                return resp.status, resp.headers.get_content_type(), resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, "", b""

    def load(url: str) -> int:
        if url not in status:
            code, ctype, body = fetch(url)
            status[url] = code
            if code == 200 and ctype == "text/html":
                links, ids[url] = parse_page(body.decode("utf-8", "replace"))
                report.pages += 1
                for link in links:
                    target = urljoin(url, link)
                    parts = urlparse(target)
                    if parts.netloc == pub.netloc and parts.netloc != local.netloc:
                        target = parts._replace(scheme=local.scheme, netloc=local.netloc).geturl()
                    elif parts.netloc != local.netloc:
                        report.external.add(target)
                        continue
                    report.links += 1
                    pending.append((url, link, target))
        return status[url]

    pending: list[tuple[str, str, str]] = []
    while queue and report.pages < limit:
        load(queue.pop())
        while pending:
            source, link, target = pending.pop()
            page, frag = urldefrag(target)
            if page not in seen and urlparse(page).path.endswith(("/", ".html")):
                seen.add(page)
                queue.append(page)
            code = load(page)
            if code != 200:
                report.broken.append(f"{urlparse(source).path}: {link} -> HTTP {code}")
            elif frag and page in ids and frag not in ids[page]:
                report.broken.append(f"{urlparse(source).path}: {link} -> no element with id '{frag}'")
    return report
