"""The `atlas` command: check, build, pdf, serve, schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import BuildError, SourceErrors


def _root(args: argparse.Namespace) -> Path:
    return Path(args.root).resolve()


def cmd_check(args: argparse.Namespace) -> int:
    from .collect import collect

    atlas = collect(_root(args), run_snippets=not args.no_snippets, use_cache=not args.no_cache)
    print(f"ok: {len(atlas.metrics)} metrics, {len(atlas.glossary)} glossary entries, "
          f"{len(atlas.config.lang_codes)} languages", file=sys.stderr)
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from .build import build_site
    from .collect import collect

    root = _root(args)
    out = build_site(root, site_dir=Path(args.site_dir) if args.site_dir else None, versions=args.version,
                     langs=args.lang, atlas=collect(root, use_cache=not args.no_cache))
    print(f"built {out}", file=sys.stderr)
    return 0


def cmd_pdf(args: argparse.Namespace) -> int:
    from .collect import collect
    from .pdf import build_pdfs

    root = _root(args)
    out = Path(args.out).resolve() if args.out else root / "site"
    written = build_pdfs(collect(root, use_cache=not args.no_cache), out, versions=args.version, langs=args.lang)
    print(f"wrote {sum(p.suffix == '.pdf' for p in written)} cheat-sheet PDFs and their printable pages under {out}",
          file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(_root(args), args.addr, args.port, version=args.version, lang=args.lang, build=not args.no_build,
                 watch=args.watch)


def cmd_schema(args: argparse.Namespace) -> int:
    from .schema import json_schema

    text = json.dumps(json_schema(), indent=2, ensure_ascii=False)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def _no_cache_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true", help="re-run every snippet and formula (ignore .cache/atlas)")


def _selection_args(p: argparse.ArgumentParser) -> None:
    """The options shared by the commands that build: which lines, which languages, and the cache."""
    p.add_argument("--version", action="append", help="only this TRL release line (repeatable)")
    p.add_argument("--lang", action="append", help="only this language (repeatable)")
    _no_cache_arg(p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="atlas", description="RL Metrics Atlas: check sources, build and serve the site.")
    parser.add_argument("--root", default=".", help="checkout to work on (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate every source; one line per error")
    p.add_argument("--no-snippets", action="store_true", help="skip running the snippets (faster)")
    _no_cache_arg(p)
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("build", help="build the static site into site/ (atomically)")
    p.add_argument("--site-dir", help="output folder (default: <root>/site)")
    _selection_args(p)
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("pdf", help="build only the one-page cheat-sheets (PDFs and printable pages) into site/")
    p.add_argument("--out", help="folder to write <version>/cheatsheets/... into (default: <root>/site)")
    _selection_args(p)
    p.set_defaults(func=cmd_pdf)
    p = sub.add_parser("serve", help="build, then serve on http://127.0.0.1:8000")
    p.add_argument("--addr", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--version", help="preview one TRL release line only (built into build/preview/)")
    p.add_argument("--lang", help="preview one language only (built into build/preview/)")
    p.add_argument("--no-build", action="store_true", help="serve the existing site/ as it is")
    p.add_argument("--watch", action="store_true", help="rebuild (just the preview) whenever a source changes")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("schema", help="print the JSON Schema of a metric file")
    p.add_argument("--output", "-o", help="write to this file")
    p.set_defaults(func=cmd_schema)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SourceErrors as exc:
        for err in exc.errors:
            print(err, flush=True)
        print(f"{len(exc.errors)} error(s)", file=sys.stderr)
        return 1
    except BuildError as exc:
        print(f"error: {exc}", flush=True)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: a build publishes nothing, and its work folder is gone
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
