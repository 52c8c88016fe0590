"""`atlas serve`: build, then serve site/ over HTTP on loopback (versions at /<version>/, 404s per version)."""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import sys
import threading
import time
from pathlib import Path

# what a static host compresses: the pages, their scripts and styles, JSON (Pagefind gzips its index files itself)
_COMPRESSED = {".html", ".js", ".css", ".json", ".svg", ".xml"}


@functools.lru_cache(maxsize=512)
def _gzipped(path: str, mtime: float) -> bytes:
    with open(path, "rb") as fh:
        return gzip.compress(fh.read(), compresslevel=6, mtime=0)


class _Handler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):  # type: ignore[override]
        """Text files go out gzip-compressed to a client that accepts it, as a static host sends them."""
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].endswith("/"):
                return super().send_head()  # the redirect to the folder's URL
            path = os.path.join(path, "index.html")
        if ("gzip" not in self.headers.get("Accept-Encoding", "") or Path(path).suffix not in _COMPRESSED
                or not os.path.isfile(path)):
            return super().send_head()
        body = _gzipped(path, os.stat(path).st_mtime)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # serve the version's own (Material) 404 page rather than the bare server one
        if code == 404:
            parts = self.path.lstrip("/").split("/", 1)
            page = Path(self.directory) / parts[0] / "404.html"
            if parts[0] and page.is_file():
                body = page.read_bytes()
                self.send_response(404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                return
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - signature of the base class
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A browser that stops reading (it left the page, or cancelled a fetch) is not an error of the server: no
        traceback for it in the terminal; any other error is printed as the base class does."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def make_server(site: Path, addr: str, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Handler, directory=str(site))
    return _Server((addr, port), handler)


def source_stamp(root: Path) -> float:
    """Newest modification time among the sources a page is made from."""
    paths = [root / "atlas.yml", root / "mkdocs.yml"]
    for folder in ("metrics", "glossary", "locales"):
        paths += (root / folder).rglob("*.y*ml") if (root / folder).is_dir() else []
    return max((p.stat().st_mtime for p in paths if p.exists()), default=0.0)


def _rebuild(root: Path, site: Path, versions: list[str] | None, langs: list[str] | None) -> None:
    from .errors import BuildError, SourceErrors
    from .pipeline import build_site

    started = time.perf_counter()
    try:
        build_site(root, site_dir=site, versions=versions, langs=langs)
    except SourceErrors as exc:
        print("\n".join(str(e) for e in exc.errors), file=sys.stderr)
        print("not rebuilt: fix the errors above (the previous build is still served)", file=sys.stderr)
        return
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return
    print(f"rebuilt in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def _watch(root: Path, site: Path, versions: list[str] | None, langs: list[str] | None,
           stop: threading.Event) -> None:
    stamp = source_stamp(root)
    while not stop.wait(1.0):
        now = source_stamp(root)
        if now != stamp:
            stamp = now
            _rebuild(root, site, versions, langs)


def serve(root: Path, addr: str, port: int, version: str | None = None, lang: str | None = None,
          build: bool = True, watch: bool = False) -> int:
    """Serve site/, or a preview of one version and/or language (built into build/preview/, site/ untouched).
    With ``watch``, every change to a source rebuilds just that preview."""
    preview = bool(version or lang)
    site = root / ("build/preview" if preview else "site")
    versions, langs = ([version] if version else None), ([lang] if lang else None)
    if build:
        from .pipeline import build_site

        build_site(root, site_dir=site, versions=versions, langs=langs)
    if not (site / "index.html").is_file():
        print(f"no site in {site}: run `atlas build` first", file=sys.stderr)
        return 1
    server = make_server(site, addr, port)
    stop = threading.Event()
    if watch:
        threading.Thread(target=_watch, args=(root, site, versions, langs, stop), daemon=True).start()
    print(f"serving {site} on http://{addr}:{port}/ (Ctrl+C to stop)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
    return 0
