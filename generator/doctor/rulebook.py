"""The rule book: every machine-checkable rule of every metric on every release line, with its words, meaning,
first action and page in every language, as plain JSON. Compiled from the editions once and cached by the content
of the sources (reading and validating the YAML takes seconds; the doctor must not)."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import cache_dir

if TYPE_CHECKING:  # compiling needs the source models; a cached book is plain JSON and needs none of them
    from ..read.config import Config, Language
    from ..read.metric import Healthy, Metric
    from ..resolve.edition import Edition, TrainerEdition
    from ..resolve.variants import Resolved

FORMAT = 1  # bump when the shape of the book changes
OPPOSITE = {"rising": ("falling",), "falling": ("rising",), "flat": ("rising", "falling")}
UI_PREFIXES = ("doctor_", "rule_", "op_", "trend_", "unbounded")
_PLACEHOLDER = re.compile(r"\\\{([a-z_]+)\\\}")


def key_pattern(key: str) -> str | None:
    """A regex of the keys a templated key stands for (``rewards/{name}/mean``), None for a plain key; a key that
    is only a placeholder (`{log_metric_name}`) would match anything, so it matches nothing."""
    if "{" not in key or re.fullmatch(r"\{[a-z_]+\}", key):
        return None
    return "^" + _PLACEHOLDER.sub(lambda m: f"(?P<{m.group(1)}>[^/]+)", re.escape(key)) + "$"


def _literal(source: str | None) -> Any:
    if source is None:
        return None
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return source


class _Words:
    """The UI strings and number format of every language."""

    def __init__(self, config: Config, ui: dict[str, dict[str, str]]):
        self.langs: list[Language] = list(config.languages)
        self.ui = ui

    def t(self, lang: Language) -> Callable[..., str]:
        return lambda name, **kw: self.ui[lang.code][name].format(**kw) if kw else self.ui[lang.code][name]

    def each(self, make: Callable[[Callable[..., str], Language], str]) -> dict[str, str]:
        return {lang.code: make(self.t(lang), lang) for lang in self.langs}

    def text(self, value: Any) -> dict[str, str]:
        default = next(lang.code for lang in self.langs if lang.default)
        return {lang.code: value.get(lang.code, default) for lang in self.langs}


def _first_action(m: Metric, item: int | None) -> Any:
    items = m.troubleshooting
    return items[min((item or 1), len(items)) - 1].actions[0]


def _rules(w: _Words, m: Metric) -> list[dict[str, Any]]:
    from ..read.metric import RANGE_FOR_LOGS, TREND_CHANGE, TREND_WINDOW
    from ..render.rulewords import bounds_words, flag_words, for_logs

    h: Healthy = m.healthy
    out: list[dict[str, Any]] = []
    first_try = w.text(_first_action(m, None))
    b = h.bounds
    if b.min is not None or b.max is not None:
        out.append({"kind": "bounds", "severity": "bug", "lo": b.min, "hi": b.max, "n": 1,
                    "words": w.each(lambda t, lang: t("doctor_rule_bounds", bounds=bounds_words(t, lang, b.min,
                                                                                                 b.max))),
                    "means": w.each(lambda t, _: t("doctor_bounds_means")),
                    "try": w.each(lambda t, _: t("doctor_bounds_try"))})
    r = h.range
    if r is not None and (r.min is not None or r.max is not None):
        out.append({"kind": "range", "severity": "warning", "lo": r.min, "hi": r.max, "n": RANGE_FOR_LOGS,
                    "words": w.each(lambda t, lang: t("doctor_rule_range", n=RANGE_FOR_LOGS,
                                                      range=bounds_words(t, lang, r.min, r.max))),
                    "means": w.each(lambda t, _: t("doctor_range_means")), "try": first_try})
    flagged = {f.op for f in h.red_flags}
    for op in OPPOSITE.get(h.trend, ()):
        if op in flagged:  # a red flag says it better
            continue
        out.append({"kind": "trend", "severity": "warning", "op": op, "window": TREND_WINDOW,
                    "change": TREND_CHANGE, "when": [],
                    "words": w.each(lambda t, lang, op=op: t("doctor_rule_expected", expected=t(f"trend_{h.trend}"),
                                                             words=t("rule_trend", op=t(f"op_{op}"),
                                                                     pct=f"{lang.number(TREND_CHANGE * 100)}%",
                                                                     n=TREND_WINDOW))),
                    "means": w.each(lambda t, _: t("doctor_trend_means", expected=t(f"trend_{h.trend}"))),
                    "try": first_try})
    for f in h.red_flags:
        trend = f.op in OPPOSITE["flat"]
        out.append({"kind": "trend" if trend else "flag", "severity": "red_flag", "op": f.op, "value": f.value,
                    "n": None if trend else for_logs(f), "window": (f.window or TREND_WINDOW) if trend else None,
                    "change": (f.change or TREND_CHANGE) if trend else None,
                    "when": [c.model_dump(exclude_none=True) for c in f.when],
                    "words": w.each(lambda t, lang, f=f: flag_words(t, lang, f)),
                    "means": w.text(f.text.root), "try": w.text(_first_action(m, f.troubleshooting))})
    for i, rule in enumerate(out):
        rule["id"] = f"{m.id}#{i}"
    return out


def _metric(w: _Words, config: Config, edition: Edition, res: Resolved) -> dict[str, Any]:
    from ..render import paths

    m = res.metric
    page = paths.folder(paths.metric_doc(m))
    return {"id": m.id, "key": m.key, "logged_as": res.logged_as, "pattern": key_pattern(res.logged_as),
            "url": {lang.code: f"{paths.line_url(config, edition.line)}{lang.prefix}{page}#healthy"
                    for lang in w.langs},
            "always": bool(m.logged_when and m.logged_when.always), "rules": _rules(w, m)}


def _trainer(w: _Words, config: Config, edition: Edition, te: TrainerEdition) -> dict[str, Any]:
    return {"id": te.id, "title": te.trainer.title, "cls": te.cls.name, "config": te.cls.config,
            "defaults": {c.option: _literal(d.value) for c, d in te.defaults if d.value is not None},
            "metrics": [_metric(w, config, edition, res) for res in te.metrics]}


def compile_book(config: Config, editions: Iterable[Edition], ui: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The rule book of ``editions`` (newest line first)."""
    from ..read.metric import NOISE, TREND_HOLDS
    from ..render import paths

    w = _Words(config, ui)
    return {
        "format": FORMAT,
        "noise": NOISE,
        "holds": TREND_HOLDS,
        "langs": [lang.code for lang in w.langs],
        "default_lang": next(lang.code for lang in w.langs if lang.default),
        "decimal": {lang.code: lang.decimal for lang in w.langs},
        "ui": {code: {k: v for k, v in strings.items() if k.startswith(UI_PREFIXES)} for code, strings in ui.items()},
        "lines": [{"name": e.line.name, "trl": e.release, "covers": list(e.line.covers),
                   "check_url": {lang.code: f"{paths.line_url(config, e.line)}{lang.prefix}"
                                            f"{paths.folder(paths.CHECK_PAGE + '.md')}" for lang in w.langs},
                   "trainers": [_trainer(w, config, e, te) for te in e.trainers]} for e in editions],
    }


def _fingerprint(root: Path) -> str:
    """A hash of every source the book is made from (by path in the checkout) and of the code that makes it (by
    file name: the same code imported from another place makes the same book)."""
    h = hashlib.sha256(str(FORMAT).encode())
    here = Path(__file__).resolve().parent
    sources = [root / "atlas.yml", *sorted((root / "locales").glob("*/ui.yaml")),
               *sorted((root / "metrics").rglob("*.y*ml"))]
    code = [Path(__file__), here.parent / "render" / "rulewords.py", here.parent / "read" / "metric.py"]
    for name, f in [(f.relative_to(root).as_posix(), f) for f in sources] + [(f.name, f) for f in code]:
        h.update(name.encode())
        h.update(f.read_bytes() if f.is_file() else b"-")
    return h.hexdigest()[:20]


def load_book(root: Path, note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The rule book of the checkout ``root``: from the cache when its sources did not change, else compiled (and
    cached). Files that do not validate are left out, said through ``note``."""
    root = root.resolve()
    folder = cache_dir(root) / "doctor"
    path = folder / f"rules-{_fingerprint(root)}.json"
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    from ..read.sources import read_sources
    from ..resolve.edition import editions

    src = read_sources(root)
    if src.errors and note:
        files = sorted({e.path for e in src.errors})
        note(f"{len(files)} source file(s) do not validate (see `atlas check`); their rules are left out: "
             + ", ".join(files[:3]) + (" ..." if len(files) > 3 else ""))
    book = compile_book(src.config, editions(src.config, src.trainers, src.metrics, src.glossary, src.explainers),
                        src.ui)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("rules-*.json"):
            old.unlink(missing_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(book, f, ensure_ascii=False)
        os.replace(tmp, path)
    except OSError:  # a read-only checkout: compile every time
        pass
    return book
