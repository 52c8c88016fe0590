"""``python -m tests.site_build FOLDER``: the real sources built into FOLDER (every line, every language), as the
tests' shared site. A process of its own, so that the test session can start it first and go on with the tests that
do not need it (see ``conftest.built_site``); a build error is printed as its one line, exit code 1."""

from __future__ import annotations

import sys
from pathlib import Path

from generator.errors import BuildError, SourceErrors
from generator.pipeline import build_site, load_atlas

ROOT = Path(__file__).resolve().parents[1]


def main(folder: str) -> int:
    try:
        build_site(ROOT, site_dir=Path(folder), atlas=load_atlas(ROOT, run_snippets=False))
    except (BuildError, SourceErrors) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
