"""Time to build every cheat-sheet of one TRL version (every trainer and language, A4 and US Letter PDFs and the
printable pages): in-process (`write_sheets`, sources already collected) and as a user runs it (`atlas pdf` in a
new process, validation from the cache included). Prints medians of N runs and the time per PDF.

    .venv/bin/python benchmarks/pdf_time.py [--version 1.16] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.collect import collect  # noqa: E402
from generator.pdf import write_sheets  # noqa: E402


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", help="TRL release line (default: the latest)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    atlas = collect(ROOT)
    version = next(v for v in atlas.config.versions if v.name == (args.version or atlas.config.versions[0].name))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        written: list[Path] = []

        def in_process() -> None:
            written[:] = write_sheets(atlas, [version], out / "lib")

        def cli() -> None:
            subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(ROOT), "pdf", "--version",
                            version.name, "--out", str(out / "cli")], check=True, cwd=ROOT, capture_output=True)

        lib = [timed(in_process) for _ in range(args.runs)]
        pdfs = sum(p.suffix == ".pdf" for p in written)
        cmd = [timed(cli) for _ in range(args.runs)]
    lib_med, cmd_med = statistics.median(lib), statistics.median(cmd)
    print(f"TRL {version.name}: {pdfs} PDFs + {len(written) - pdfs} printable pages, median of {args.runs} runs")
    print(f"  write_sheets (in process): {lib_med:6.2f} s  ({lib_med / pdfs:.2f} s per PDF)  runs: "
          + ", ".join(f"{t:.2f}" for t in lib))
    print(f"  atlas pdf (new process):   {cmd_med:6.2f} s  ({cmd_med / pdfs:.2f} s per PDF)  runs: "
          + ", ".join(f"{t:.2f}" for t in cmd))


if __name__ == "__main__":
    main()
