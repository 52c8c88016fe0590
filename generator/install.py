"""Where the generator is installed (an editable install in the project): its own data files and the project's
node_modules, whatever checkout `--root` points at."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PROJECT = PACKAGE.parent
KATEX_DIST = PROJECT / "node_modules" / "katex" / "dist"
MATHJAX = PROJECT / "node_modules" / "mathjax-full"


def project_file(rel: str, root: Path) -> Path:
    """A path named in mkdocs.yml: files of the generator package come from its installation, others from
    ``root``."""
    return PROJECT / rel if rel.startswith("generator/") else root / rel
