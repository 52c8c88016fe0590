"""A diagnosis as people and machines read it: the short terminal report in one language, and the JSON."""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from .evaluate import Diagnosis, Finding

WIDTH = 100
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")


class Words:
    """The book's UI strings and number format in one language."""

    def __init__(self, book: dict[str, Any], lang: str):
        self.book, self.lang = book, lang
        self.ui = book["ui"][lang]
        self.decimal = book.get("decimal", {}).get(lang, ".")

    def __call__(self, name: str, /, **kw: Any) -> str:
        return self.ui[name].format(**kw) if kw else self.ui[name]

    def num(self, x: float | None) -> str:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return "NaN"
        s = f"{x:.4g}"
        return s.replace(".", self.decimal) if self.decimal != "." else s

    def text(self, texts: dict[str, str]) -> str:
        """A source text for a terminal: Markdown links reduced to their words, on one line."""
        return " ".join(_LINK.sub(r"\1", texts.get(self.lang) or texts[self.book["default_lang"]]).split())


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


_CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_TOKEN = re.compile(rf"[{_CJK}][，。；：、）」』！？]*\s*|[^\s{_CJK}]+\s*")


def wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    """``text`` in lines of at most ``width`` columns, each after ``indent``; a CJK character is a word of its own
    and takes two columns."""
    lines, line = [], ""
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        tok = tok.rstrip() + (" " if tok != tok.rstrip() else "")
        if line.strip() and _width(indent + line + tok.rstrip()) > width:
            lines.append(indent + line.rstrip())
            line = ""
        line += tok
    if line.strip():
        lines.append(indent + line.rstrip())
    return lines


def spans_text(f: Finding) -> str:
    parts = [str(a) if a == b else f"{a}–{b}" for a, b in f.spans[:4]]
    return ", ".join(parts) + (", …" if len(f.spans) > 4 else "")


def finding_lines(w: Words, f: Finding, width: int = WIDTH) -> list[str]:
    head = f"{w(f'doctor_sev_{f.severity}')}  {f.key}  {w.text(f.rule['words'])}"
    out = wrap(head, "", width)
    out += wrap(w("doctor_where", steps=spans_text(f), logs=f.logs, first=w.num(f.first), last=w.num(f.last)), "  ",
                width)
    out += wrap(w("doctor_line", label=w("doctor_means"), text=w.text(f.rule["means"])), "  ", width)
    out += wrap(w("doctor_line", label=w("doctor_try"), text=w.text(f.rule["try"])), "  ", width)
    out.append(f"  {f.metric['url'][w.lang]}")
    return out


def _settings_used(d: Diagnosis) -> list[str]:
    used = {c["setting"] for m in d.known.values() for r in m.metric["rules"] for c in r.get("when", [])
            if "setting" in c}
    return sorted(s for s in used if s in d.settings)


def terminal(d: Diagnosis, book: dict[str, Any], lang: str, width: int = WIDTH) -> str:
    w = Words(book, lang)
    h = d.history
    steps = h.steps
    out = [w("doctor_title", source=h.source, kind=h.kind)]
    out += wrap(w("doctor_trainer", title=d.trainer["title"], cls=d.trainer["cls"], line=d.line["name"],
                  how=w("doctor_chosen" if d.chosen else "doctor_detected"), known=len(d.known),
                  first=int(steps[0]), last=int(steps[-1]), count=len(steps)), "", width)
    if d.alike:
        # a trainer that fits as well may have scored on another line (a line the chosen trainer is not on)
        titles = {t["id"]: t["title"] for ln in book["lines"] for t in ln["trainers"]}
        others = ", ".join(f"{titles[tid]} (--trainer {tid})" for tid in d.alike)
        out += wrap(w("doctor_alike", others=others, title=d.trainer["title"]), "", width)
    used = _settings_used(d)
    if used:
        items = [f"{s}={d.settings[s][0]!r}" + ("" if d.settings[s][1] == "given"
                                                  else f" ({w('doctor_default', trl=d.line['trl'])})")
                 for s in used]
        out += wrap(w("doctor_settings", items=", ".join(items)), "", width)
    alarms, warnings = d.alarms, len(d.findings) - d.alarms
    out.append("")
    out.append(w("doctor_summary", alarms=alarms, warnings=warnings) if d.findings else w("doctor_none"))
    for f in d.findings:
        out.append("")
        out += finding_lines(w, f, width)
    notes = []
    logs = [r for r, why, _ in d.skipped if why == "logs"]
    if logs:
        need = min(r.get("window") or r.get("n") or 0 for r in logs)
        notes += wrap(w("doctor_skipped_logs", count=len(logs), need=need, have=len(steps)), "", width)
    for setting in sorted({detail for _, why, detail in d.skipped if why == "setting"}):
        count = sum(1 for _, why, detail in d.skipped if why == "setting" and detail == setting)
        notes += wrap(w("doctor_skipped_setting", count=count, setting=setting), "", width)
    if d.unknown:
        notes += wrap(w("doctor_unknown", count=len(d.unknown), keys=", ".join(d.unknown)), "", width)
    if h.eval_keys:
        notes += wrap(w("doctor_eval_keys", count=len(h.eval_keys)), "", width)
    if notes:
        out += [""] + notes
    out += ["", w("doctor_more", url=d.line["check_url"][lang])]
    return "\n".join(out) + "\n"


def as_json(d: Diagnosis, lang: str, book: dict[str, Any]) -> dict[str, Any]:
    w = Words(book, lang)
    steps = d.history.steps

    def num(x: float) -> float | None:
        return None if math.isnan(x) else x

    return {
        "source": d.history.source, "format": d.history.kind, "language": lang,
        "trainer": d.trainer["id"], "class": d.trainer["cls"], "line": d.line["name"], "trl": d.line["trl"],
        "detected": not d.chosen, "fits_as_well": d.alike,
        "steps": {"first": int(steps[0]), "last": int(steps[-1]), "logged": len(steps)},
        "settings": {k: {"value": v, "from": origin} for k, (v, origin) in sorted(d.settings.items())},
        "red_flags": d.alarms, "warnings": len(d.findings) - d.alarms,
        "findings": [{"severity": f.severity, "kind": f.rule["kind"], "rule": f.rule["id"], "metric": f.metric["id"],
                      "key": f.key, "op": f.rule.get("op"), "value": f.rule.get("value"),
                      "spans": [list(s) for s in f.spans], "since": f.since, "logged_values": f.logs,
                      "first_value": num(f.first), "last_value": num(f.last), "words": w.text(f.rule["words"]),
                      "means": w.text(f.rule["means"]), "try_first": w.text(f.rule["try"]),
                      "url": f.metric["url"][lang]} for f in d.findings],
        "not_evaluated": [{"rule": r["id"], "why": why, "needs": detail} for r, why, detail in d.skipped],
        "known_keys": sorted(d.known), "unknown_keys": d.unknown, "eval_keys": d.history.eval_keys,
    }
