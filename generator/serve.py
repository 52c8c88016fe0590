"""`atlas serve`: build, then serve site/ over HTTP on loopback (versions at /<version>/, 404s per version)."""

from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path


class _Handler(http.server.SimpleHTTPRequestHandler):
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


def make_server(site: Path, addr: str, port: int) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_Handler, directory=str(site))
    return http.server.ThreadingHTTPServer((addr, port), handler)


def serve(root: Path, addr: str, port: int, version: str | None = None, lang: str | None = None,
          build: bool = True) -> int:
    site = root / "site"
    if build:
        from .build import build_site

        build_site(root, versions=[version] if version else None, langs=[lang] if lang else None)
    if not (site / "index.html").is_file():
        print(f"no site in {site}: run `atlas build` first", file=sys.stderr)
        return 1
    server = make_server(site, addr, port)
    print(f"serving {site} on http://{addr}:{port}/ (Ctrl+C to stop)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
