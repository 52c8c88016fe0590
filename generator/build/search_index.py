"""The search index of one built line: Pagefind over the line's HTML, after mkdocs.

Pagefind splits the index by each page's ``<html lang>``, so a reader's browser fetches its own language only, and
in small chunks, only those the words typed need. It folds diacritics (``nguong`` finds ``ngưỡng``, ``do`` finds
``độ``) and cuts Chinese into words itself. Only the article of a page is indexed (``data-pagefind-body``, set by
the hooks), so that the navigation and the footer, the same on every page, do not match every query."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..errors import BuildError

# a metric key is one word to search: `clip_ratio/low_mean` stays whole (its parts are indexed too)
WORD_CHARACTERS = "_/"
# the permalink sign of every heading, the copy button, and the formulas (KaTeX spells each symbol out)
IGNORED = ".headerlink, .md-clipboard, .katex"
BUNDLE = "pagefind"
# Pagefind's own search interfaces, which the site does not use (assets/search.js talks to pagefind.js)
UNUSED = ("pagefind-ui.*", "pagefind-modular-ui.*", "pagefind-component-ui.*", "pagefind-highlight.js")


def index_line(site: Path) -> None:
    """Write the line's search bundle into ``site``/pagefind/."""
    cmd = [sys.executable, "-m", "pagefind", "--site", str(site), "--output-subdir", BUNDLE,
           "--include-characters", WORD_CHARACTERS, "--exclude-selectors", IGNORED, "--silent"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not (site / BUNDLE / "pagefind-entry.json").is_file():
        lines = (ln.strip() for ln in (proc.stderr or proc.stdout).splitlines())
        why = "; ".join(dict.fromkeys(ln for ln in lines if ln))[-400:]  # Pagefind may say it twice
        raise BuildError(f"search index of {site.name}: pagefind failed (exit code {proc.returncode}): {why}")
    for pattern in UNUSED:
        for path in (site / BUNDLE).glob(pattern):
            path.unlink()
