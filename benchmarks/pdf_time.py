"""Time to build every cheat-sheet of one release line (every trainer and language, A4 and US Letter PDFs and the
printable pages), every PDF made (no PDF cache): in process (`build_pdfs` from the checked atlas) and as a user runs
it (`atlas pdf --no-cache` in a new process, checking included), and in process again with the formulas left as
MathJax draws them (`print.svgflat` off: the baseline of the flattening). Prints medians of N runs, the time per PDF
and the ratio to that baseline.

    .venv/bin/python benchmarks/pdf_time.py [--version 1.16] [--runs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import ROOT, median, runs, shown

from generator.pipeline import build_pdfs, load_atlas
from generator.print import svgflat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", help="TRL release line (default: the latest)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    atlas = load_atlas(ROOT)
    line = args.version or atlas.config.latest.name
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        written: list[Path] = []

        def in_process() -> None:
            written[:] = build_pdfs(atlas, out / "lib", versions=[line], use_cache=False)

        def cli() -> None:
            subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(ROOT), "pdf", "--no-cache",
                            "--version", line, "--out", str(out / "cli")], check=True, cwd=ROOT, capture_output=True)

        def unflattened() -> None:
            flat, svgflat.flat_or_same = svgflat.flat_or_same, lambda svg: svg
            try:
                in_process()
            finally:
                svgflat.flat_or_same = flat

        lib, drawn = [], []
        for _ in range(args.runs):  # alternated, so that a change of the machine's load hits both alike
            lib += runs(in_process, 1)
            drawn += runs(unflattened, 1)
        pdfs = sum(p.suffix == ".pdf" for p in written)
        cmd = runs(cli, args.runs)
    print(f"TRL {line}: {pdfs} PDFs + {len(written) - pdfs} printable pages, median of {args.runs} runs")
    print(f"  build_pdfs (in process): {shown(lib)}, {median(lib) / pdfs:.2f} s per PDF")
    print(f"  atlas pdf (new process): {shown(cmd)}, {median(cmd) / pdfs:.2f} s per PDF")
    print(f"  build_pdfs with MathJax's SVG as drawn (no flattening): {shown(drawn)}, {median(drawn) / pdfs:.2f} s "
          f"per PDF; flattened / as drawn = {median(lib) / median(drawn):.2f}")


if __name__ == "__main__":
    main()
