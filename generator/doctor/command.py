"""`atlas doctor PATH`: read a run, diagnose it, print the report; exit 1 when a red flag holds, 2 when the input
cannot be read (one line naming the file and the problem)."""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

from .history import BadInput


def parse_value(text: str) -> Any:
    """A setting's value as typed on the command line: a Python literal (``0.04``, ``True``, ``"group"``), else
    the text itself (``group``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def read_settings(config: str | None, pairs: list[str] | None) -> dict[str, Any]:
    """The run's settings from a JSON or YAML file (W&B's ``config.yaml`` wraps each in ``{value: ...}``) and
    ``NAME=VALUE`` pairs, which win."""
    out: dict[str, Any] = {}
    if config:
        path = Path(config)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BadInput(path, f"cannot read the configuration: {exc.strerror or exc}") from None
        try:
            import yaml

            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise BadInput(path, f"not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                                 f"{str(exc).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise BadInput(path, "the configuration must be a mapping of setting names to values")
        for k, v in data.items():
            if isinstance(k, str) and not k.startswith("_"):
                out[k] = v["value"] if isinstance(v, dict) and "value" in v else v
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise BadInput("--set", f"'{pair}' is not NAME=VALUE")
        out[name.strip()] = parse_value(value.strip())
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="trainer_state.json, a TensorBoard event file or folder, a W&B history export "
                                "(.csv, wandb-history.jsonl) or a .jsonl file of logged dicts")
    p.add_argument("--lang", help="language of the report (default: the site's default language)")
    p.add_argument("--trainer", help="the trainer that logged the run (default: found from the keys)")
    p.add_argument("--trl", help="the TRL release or line (e.g. 1.14.0 or 1.16; default: found from the keys)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="a setting of the run (repeatable)")
    p.add_argument("--config", help="the run's settings as a JSON or YAML file (e.g. args.to_dict(), W&B's "
                                    "config.yaml)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")


def run(args: argparse.Namespace, root: Path) -> int:
    from .evaluate import diagnose
    from .readers import read_history
    from .report import as_json, terminal
    from .rulebook import load_book

    try:
        settings = read_settings(args.config, args.set)
        history = read_history(args.path)
        book = load_book(root, note=lambda msg: print(f"note: {msg}", file=sys.stderr))
        lang = args.lang or book["default_lang"]
        if lang not in book["langs"]:
            raise BadInput("--lang", f"'{lang}' is not a language of the atlas ({', '.join(book['langs'])})")
        d = diagnose(book, history, trainer=args.trainer, trl=args.trl, settings=settings)
        if args.html:
            from .html import write_html

            write_html(d, book, lang, Path(args.html))
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(d, lang, book), ensure_ascii=False, indent=1))
    else:
        sys.stdout.write(terminal(d, book, lang))
    return 1 if d.alarms else 0
