"""A link and fragment checker for the built site, over HTTP: every internal href/src of every page reachable from the
site root must answer 200, and every #fragment must name an element of the target page."""

from __future__ import annotations

import html.parser
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlparse


class _Page(html.parser.HTMLParser):
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
                # a link element's rel=alternate/canonical points at the public URL, checked like any other
                self.links.append(value)


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
                parser = _Page()
                parser.feed(body.decode("utf-8", "replace"))
                ids[url] = parser.ids
                report.pages += 1
                for link in parser.links:
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
