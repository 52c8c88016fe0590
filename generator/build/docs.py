"""The generated docs folder of one line: its Markdown pages and the static files they use."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..install import KATEX_DIST

ASSETS = Path(__file__).with_name("assets")


def write_docs(pages: dict[str, str], docs: Path) -> None:
    """Write ``{docs path: Markdown}`` and the site's assets (stylesheets, scripts, KaTeX fonts) into ``docs``."""
    for rel, text in pages.items():
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    copy_assets(docs / "assets")


def copy_assets(dest: Path) -> None:
    shutil.copytree(ASSETS, dest, dirs_exist_ok=True)
    copy_katex(dest / "katex")


def copy_katex(dest: Path) -> None:
    """KaTeX's stylesheet and fonts (the formulas are HTML already: no script)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(KATEX_DIST / "katex.min.css", dest / "katex.min.css")
    shutil.copytree(KATEX_DIST / "fonts", dest / "fonts", dirs_exist_ok=True)
