"""The `atlas` command: check, build, pdf, serve, doctor, i18n, schema."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import BuildError, SourceErrors


def _root(args: argparse.Namespace) -> Path:
    return Path(args.root).resolve()


def cmd_check(args: argparse.Namespace) -> int:
    from .pipeline import load_atlas
    from .read.translations import report

    atlas = load_atlas(_root(args), run_snippets=not args.no_snippets, use_cache=not args.no_cache)
    cfg, src = atlas.config, atlas.sources
    langs = [lang.code for lang in cfg.translations]
    rep = report([it.doc for it in atlas.translated], langs, cfg.default_lang, atlas.stamps)
    stale = ", ".join(f"{lang} {rep.count(lang, 'stale')}" for lang in langs)
    print(f"ok: {len(src.trainers)} trainers, {len(src.metrics)} metrics, {len(src.glossary)} glossary entries, "
          f"{len(atlas.editions)} release lines, {len(cfg.lang_codes)} languages (stale translations, never an "
          f"error: {stale}; see `atlas i18n status`)", file=sys.stderr)
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from .pipeline import build_site, load_atlas, published_at

    root = _root(args)
    atlas = load_atlas(root, use_cache=not args.no_cache)
    out = build_site(root, site_dir=Path(args.site_dir) if args.site_dir else None, versions=args.version,
                     langs=args.lang, atlas=published_at(atlas, args.site_url) if args.site_url else atlas,
                     use_cache=not args.no_cache)
    print(f"built {out}", file=sys.stderr)
    return 0


def cmd_pdf(args: argparse.Namespace) -> int:
    from .pipeline import build_pdfs, load_atlas, published_at

    root = _root(args)
    out = Path(args.out).resolve() if args.out else root / "site"
    atlas = load_atlas(root, use_cache=not args.no_cache)
    written = build_pdfs(published_at(atlas, args.site_url) if args.site_url else atlas, out, versions=args.version,
                         langs=args.lang, use_cache=not args.no_cache)
    print(f"wrote {sum(p.suffix == '.pdf' for p in written)} cheat-sheet PDFs and their printable pages under {out}",
          file=sys.stderr)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor.command import run

    return run(args, _root(args))


def cmd_serve(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(_root(args), args.addr, args.port, version=args.version, lang=args.lang, build=not args.no_build,
                 watch=args.watch)


def _i18n_sources(root: Path) -> tuple[Any, list, dict]:
    """The configuration, every parsed source file and the stamps: enough for the translation report even when
    some file does not validate (validation errors are `atlas check`'s business; unreadable stamps are raised)."""
    from .read.sources import read_sources

    src = read_sources(root)
    if bad := [e for e in src.errors if e.path.endswith("/stamps.yaml")]:
        raise SourceErrors(bad)
    return src.config, list(src.docs), src.stamps


def _i18n_langs(config: Any, chosen: list[str] | None) -> list[str]:
    langs = [lang.code for lang in config.translations]
    unknown = [c for c in chosen or [] if c not in langs]
    if unknown:
        from .errors import did_you_mean

        raise BuildError(f"--lang {unknown[0]}: not a translated language ({', '.join(langs)})"
                         + did_you_mean(unknown[0], langs))
    return chosen or langs


def cmd_i18n_status(args: argparse.Namespace) -> int:
    from .read.translations import report

    config, docs, stamps = _i18n_sources(_root(args))
    langs = _i18n_langs(config, args.lang)
    rep = report(docs, langs, config.default_lang, stamps)
    status = {lang.code: lang.status for lang in config.languages}
    print(f"{'language':<10}{'status':<13}{'translated':>12}{'coverage':>10}{'stale':>7}{'unstamped':>11}")
    for lang in langs:
        print(f"{lang:<10}{status[lang]:<13}{f'{rep.translated(lang)}/{rep.count(lang)}':>12}"
              f"{rep.percent(lang):>9.1f}%{rep.count(lang, 'stale'):>7}{rep.count(lang, 'unstamped'):>11}")
    if args.by_file:
        for lang in langs:
            print(f"\n{lang}: per file (translated/total, stale)")
            for path in rep.paths():
                print(f"  {path:<52}{f'{rep.translated(lang, path=path)}/{rep.count(lang, path=path)}':>9}"
                      f"{rep.count(lang, 'stale', path=path):>4}")
    for state, wanted in (("stale", args.stale), ("missing", args.missing)):
        if wanted:
            for lang in langs:
                for f in rep.of_state(lang, state):  # type: ignore[arg-type]
                    print(f"{f.path}:{f.line}: {f.name}: {lang} translation {state}")
    return 0


def cmd_i18n_stamp(args: argparse.Namespace) -> int:
    from .read.translations import dump_stamps, new_stamps, stamps_path

    root = _root(args)
    config, docs, stamps = _i18n_sources(root)
    accept = set()
    for spec in args.accept or []:
        path, _, field = spec.partition(":")
        accept.add((path, field or "*"))
    for lang in _i18n_langs(config, args.lang):
        fresh = new_stamps(docs, lang, config.default_lang, stamps.get(lang, {}), accept)
        stamps_path(root, lang).write_text(dump_stamps(fresh, lang), encoding="utf-8")
        print(f"{stamps_path(root, lang).relative_to(root)}: {sum(len(v) for v in fresh.values())} stamps",
              file=sys.stderr)
    return 0


def schema_of(kind: str) -> dict[str, Any]:
    """The JSON Schema of one kind of source file: ``metric``, ``glossary``, ``trainer`` or ``explainer``."""
    from .read.explainer import Explainer
    from .read.glossary import GlossaryEntry
    from .read.load import json_schema
    from .read.metric import Metric
    from .read.trainer import Trainer

    model, title = {"metric": (Metric, "metric"), "glossary": (GlossaryEntry, "glossary entry"),
                    "trainer": (Trainer, "trainer"), "explainer": (Explainer, "explainer")}[kind]
    return json_schema(model, f"RL Metrics Atlas {title}")


def cmd_schema(args: argparse.Namespace) -> int:
    kind = next((k for k in ("glossary", "trainer", "explainer") if getattr(args, k)), "metric")
    text = json.dumps(schema_of(kind), indent=2, ensure_ascii=False)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


def _root_arg(p: argparse.ArgumentParser) -> None:
    """`--root` is accepted after the command too (`atlas check --root ../other`)."""
    p.add_argument("--root", default=argparse.SUPPRESS, help="checkout to work on (default: current directory)")


def _no_cache_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="re-run every snippet and formula and remake every PDF (ignore .cache/atlas)")


def _selection_args(p: argparse.ArgumentParser) -> None:
    """The options shared by the commands that build: which lines, which languages, where it is published, and the
    cache."""
    p.add_argument("--version", action="append", help="only this TRL release line (repeatable)")
    p.add_argument("--lang", action="append", help="only this language (repeatable)")
    p.add_argument("--site-url", help="the public URL the site is published at (default: atlas.yml's site_url); "
                                      "links and the cheat-sheets' QR codes point there")
    _no_cache_arg(p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="atlas",
                                     description="RL Metrics Atlas: check sources, build and serve the site.")
    parser.add_argument("--root", default=".", help="checkout to work on (default: current directory)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate every source; one line per error")
    _root_arg(p)
    p.add_argument("--no-snippets", action="store_true", help="skip running the snippets (faster)")
    _no_cache_arg(p)
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("build", help="build the static site into site/ (atomically)")
    _root_arg(p)
    p.add_argument("--site-dir", help="output folder (default: <root>/site)")
    _selection_args(p)
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("pdf", help="build only the one-page cheat-sheets (PDFs and printable pages) into site/")
    _root_arg(p)
    p.add_argument("--out", help="folder to write <version>/cheatsheets/... into (default: <root>/site)")
    _selection_args(p)
    p.set_defaults(func=cmd_pdf)
    p = sub.add_parser("doctor", help="read a run's logs and report the curves the atlas's rules find unhealthy "
                                      "(exit 1 on a red flag, 2 on unreadable input)")
    from .doctor.command import add_arguments

    add_arguments(p)
    p.set_defaults(func=cmd_doctor)
    p = sub.add_parser("serve", help="build, then serve on http://127.0.0.1:8000")
    _root_arg(p)
    p.add_argument("--addr", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--version", help="preview one TRL release line only (built into build/preview/)")
    p.add_argument("--lang", help="preview one language only (built into build/preview/)")
    p.add_argument("--no-build", action="store_true", help="serve the existing site/ as it is")
    p.add_argument("--watch", action="store_true", help="rebuild (just the preview) whenever a source changes")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("i18n", help="translation status and stamps")
    i18n = p.add_subparsers(dest="i18n_command", required=True)
    q = i18n.add_parser("status", help="per language: texts translated, missing and stale")
    _root_arg(q)
    q.add_argument("--lang", action="append", help="only this language (repeatable)")
    q.add_argument("--stale", action="store_true", help="list every stale translation as path:line: field")
    q.add_argument("--missing", action="store_true", help="list every missing translation as path:line: field")
    q.add_argument("--by-file", action="store_true", help="coverage per source file")
    q.set_defaults(func=cmd_i18n_status)
    q = i18n.add_parser("stamp", help="record which English text each translation was made from "
                                      "(stale translations keep their old stamp unless accepted)")
    _root_arg(q)
    q.add_argument("--lang", action="append", help="only this language (repeatable)")
    q.add_argument("--accept", action="append", metavar="FILE[:FIELD]",
                   help="mark this stale translation (or all of a file's) as checked against the new English")
    q.set_defaults(func=cmd_i18n_stamp)
    p = sub.add_parser("schema", help="print the JSON Schema of a metric file (or of a glossary entry)")
    _root_arg(p)
    p.add_argument("--glossary", action="store_true", help="the schema of a glossary entry instead of a metric")
    p.add_argument("--trainer", action="store_true", help="the schema of a trainer file instead of a metric")
    p.add_argument("--explainer", action="store_true", help="the schema of an explainer page instead of a metric")
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
    except BrokenPipeError:  # `atlas i18n status | head`: the reader has what it wanted
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl-C: a build publishes nothing, and its work folder is gone
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
