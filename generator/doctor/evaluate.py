"""Evaluating the rule book on a history: which trainer and release line logged it, which of its keys the atlas
knows, and every rule that holds, over windows of logged values, never on a single point (unless a rule asks)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..resolve.releases import in_range, release_key
from .history import BadInput, History, Series

Rule = dict[str, Any]
Metric = dict[str, Any]
# mean |x[i+1] - x[i]| of white noise with standard deviation s is 2s/sqrt(pi): this turns one into the other
HALF_NORMAL = math.sqrt(math.pi) / 2


@dataclass(frozen=True)
class Match:
    metric: Metric
    bindings: dict[str, str]  # what each `{placeholder}` of the key stood for


@dataclass
class Finding:
    rule: Rule
    metric: Metric
    key: str
    spans: list[tuple[int, int]]  # first and last step of each stretch where the rule holds
    logs: int  # logged values inside the spans
    first: float  # the value at the first step that holds it
    last: float  # the value at the last one

    @property
    def severity(self) -> str:
        return self.rule["severity"]

    @property
    def since(self) -> int:
        return self.spans[0][0]


@dataclass
class Diagnosis:
    history: History
    line: dict[str, Any]
    trainer: dict[str, Any]
    chosen: bool  # the user named the trainer or the line (else detected from the keys)
    known: dict[str, Match]
    unknown: list[str]
    settings: dict[str, tuple[Any, str]]  # name -> (value, "given" | "default")
    alike: list[str] = field(default_factory=list)  # ids of other trainers whose keys fit the history as well
    findings: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Rule, str, Any]] = field(default_factory=list)  # (rule, reason, detail)

    @property
    def alarms(self) -> int:
        """Findings that fail a CI job: red flags, and values outside what the maths allows."""
        return sum(f.severity in ("red_flag", "bug") for f in self.findings)


# --- which trainer and line ---------------------------------------------------------------------------------------

def match_keys(keys: list[str], trainer: dict[str, Any]) -> tuple[dict[str, Match], list[str]]:
    """The history's keys that ``trainer`` logs (with what each placeholder stood for), and the others."""
    exact = {m["logged_as"]: m for m in trainer["metrics"] if m["pattern"] is None and "{" not in m["logged_as"]}
    templated = sorted((m for m in trainer["metrics"] if m["pattern"]),
                       key=lambda m: -len(re.sub(r"\{[a-z_]+\}", "", m["logged_as"])))
    known, unknown = {}, []
    for key in keys:
        if key in exact:
            known[key] = Match(exact[key], {})
            continue
        for m in templated:
            if hit := re.match(m["pattern"], key):
                known[key] = Match(m, hit.groupdict())
                break
        else:
            unknown.append(key)
    return known, unknown


def _line_of(book: dict[str, Any], trl: str) -> dict[str, Any]:
    names = [ln["name"] for ln in book["lines"]]
    if trl in names:
        return book["lines"][names.index(trl)]
    if re.fullmatch(r"\d+\.\d+\.\d+", trl):
        for ln in book["lines"]:
            if in_range(trl, ln["covers"][0], ln["covers"][1]):
                return ln
        if release_key(trl) < release_key(book["lines"][-1]["covers"][0]):
            return book["lines"][-1]
    raise BadInput("--trl", f"'{trl}' is neither a line ({', '.join(names)}) nor a TRL release the atlas covers")


def _unlogged(s: dict[str, Any]) -> int:
    """How many keys the trainer logs at every step (whatever the settings) are missing from the history."""
    return sum(1 for m in s["trainer"]["metrics"]
               if m["always"] and "{" not in m["logged_as"] and m["logged_as"] not in s["known"])


def choose(book: dict[str, Any], history: History, trainer: str | None = None, trl: str | None = None
           ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Match], list[str], list[str]]:
    """The line and trainer that logged ``history`` (or the ones named), its known keys, the unknown ones, and the
    other trainers that fit the keys just as well. Mixed trainers and histories no trainer logs are `BadInput`."""
    lines = [_line_of(book, trl)] if trl else book["lines"]
    keys = history.keys
    scores: dict[str, dict[str, Any]] = {}  # trainer id -> best (count, line, trainer, known, unknown)
    for ln in lines:  # newest first: a tie keeps the newest line
        for t in ln["trainers"]:
            known, unknown = match_keys(keys, t)
            best = scores.get(t["id"])
            if best is None or len(known) > best["count"]:
                scores[t["id"]] = {"count": len(known), "line": ln, "trainer": t, "known": known,
                                   "unknown": unknown}
    if trainer is not None:
        if trainer not in scores:
            where = f"line {lines[0]['name']}" if trl else "any line"
            ids = sorted({t["id"] for ln in lines for t in ln["trainers"]})
            raise BadInput("--trainer", f"'{trainer}' is not a trainer of {where} ({', '.join(ids)})")
        s = scores[trainer]
        return s["line"], s["trainer"], s["known"], s["unknown"], []
    found = {tid: s for tid, s in scores.items() if s["count"]}
    if not found:
        raise BadInput(history.source, f"no key of any trainer the atlas documents (keys: "
                                       f"{', '.join(keys[:6])}{', ...' if len(keys) > 6 else ''})")
    # one run is one trainer: some trainer must log every key the atlas knows in it (the GRPO-style RLOO and
    # distillation log subsets of GRPO's keys, KTO most of DPO's, so "a key only one trainer logs" cannot decide)
    union = {k for s in found.values() for k in s["known"]}
    covering = {tid: s for tid, s in found.items() if union <= set(s["known"])}
    if not covering:
        ranked = sorted(found.values(), key=lambda s: -s["count"])
        parts = "; ".join(f"{s['trainer']['title']} does not log "
                          f"{', '.join(sorted(union - set(s['known']))[:2])}" for s in ranked[:6])
        raise BadInput(history.source, f"mixed trainers: no trainer logs all of these keys ({parts}); give one run, "
                                       f"or choose with --trainer")
    found = covering
    # a tie goes to the trainer the history lacks fewest always-logged keys of: a distillation run fits GRPO's keys
    # too, but lacks the reward keys GRPO logs at every step. What still ties (a default GRPO run logs exactly the
    # keys of the GRPO-style RLOO) goes to the first trainer in the book's order, and the report names the others.
    rank = {tid: (s["count"], -_unlogged(s)) for tid, s in found.items()}
    best_id = max(found, key=lambda tid: rank[tid])
    best = found[best_id]
    alike = [tid for tid in found if tid != best_id and rank[tid] == rank[best_id]]
    return best["line"], best["trainer"], best["known"], best["unknown"], alike


# --- conditions ---------------------------------------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def compare_value(a: Any, op: str, b: Any) -> bool:
    """A setting against a condition's value."""
    if op in ("in", "not_in"):
        return any(_same(a, v) for v in b) == (op == "in")
    if op in ("==", "!="):
        return _same(a, b) == (op == "==")
    if not isinstance(a, int | float) or isinstance(a, bool) or a is None:
        return False
    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]


def compare_array(x: np.ndarray, op: str, value: Any) -> np.ndarray:
    """A comparison over logged values (NaN never holds one, except `nan`)."""
    if op == "nan":
        return np.isnan(x)
    if op in ("in", "not_in"):
        hit = np.zeros(len(x), bool)
        for v in value:
            hit |= np.isclose(x, float(v), rtol=1e-6, atol=1e-9)
        return hit if op == "in" else ~hit & ~np.isnan(x)
    v = float(value)
    with np.errstate(invalid="ignore"):
        if op in ("==", "!="):
            same = np.isclose(x, v, rtol=1e-6, atol=1e-9)
            return same if op == "==" else ~same & ~np.isnan(x)
        return {">": x > v, ">=": x >= v, "<": x < v, "<=": x <= v}[op]


def _concrete(key: str, bindings: dict[str, str], renamed: dict[str, str]) -> str:
    key = renamed.get(key, key)
    for name, value in bindings.items():
        key = key.replace("{" + name + "}", value)
    return key


# --- the rule families --------------------------------------------------------------------------------------------

def runs(mask: np.ndarray, n: int) -> list[tuple[int, int]]:
    """The stretches of at least ``n`` consecutive True values, as (first, last) indices."""
    if not mask.any():
        return []
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    keep = ends - starts + 1 >= n
    return list(zip(starts[keep].tolist(), ends[keep].tolist(), strict=True))


def trend_windows(x: np.ndarray, op: str, window: int, change: float, noise: float, holds: int
                  ) -> list[tuple[int, int]]:
    """The stretches (first, last index) covered by windows of ``window`` values in which the median of the second
    half moved from the first half's in the direction ``op`` by more than ``change`` of the larger level and by more
    than ``noise`` standard deviations of the noise (estimated from the mean absolute step-to-step change, which a
    smooth trend barely moves), in every window starting within ``window / holds`` values in a row. Windows start
    every tenth of a window."""
    if len(x) < window:
        return []
    half, hop = window // 2, max(1, window // 10)
    starts = np.arange(0, len(x) - window + 1, hop)
    if starts[-1] != len(x) - window:
        starts = np.append(starts, len(x) - window)
    win = sliding_window_view(x, window)[starts]
    ma, mb = np.median(win[:, :half], axis=1), np.median(win[:, window - half:], axis=1)
    steps = np.concatenate(([0.0], np.cumsum(np.abs(np.diff(x)))))
    sigma = (steps[starts + window - 1] - steps[starts]) / (window - 1) * HALF_NORMAL
    delta = (mb - ma) if op == "rising" else (ma - mb)
    fire = (delta > 0) & (delta > change * np.maximum(np.abs(ma), np.abs(mb))) & (delta > noise * sigma)
    out: list[tuple[int, int]] = []
    for a, b in runs(fire, max(1, math.ceil(window / holds / hop))):
        out.append((int(starts[a]), int(starts[b]) + window - 1))
    return out


class _Run:
    """One history against one trainer's rules on one line."""

    def __init__(self, book: dict[str, Any], d: Diagnosis):
        self.book, self.d = book, d
        self.renamed = {m["key"]: m["logged_as"] for m in d.trainer["metrics"]}

    def setting(self, name: str) -> tuple[bool, Any]:
        if name in self.d.settings:
            return True, self.d.settings[name][0]
        return False, None

    def applies(self, rule: Rule, bindings: dict[str, str]) -> str | None:
        """None when the rule's run-level conditions hold; else why not: 'off' or the setting it needs."""
        for c in rule.get("when", []):
            if "logged" in c:
                if _concrete(c["logged"], bindings, self.renamed) not in self.d.history.series:
                    return "off"
            elif "setting" in c:
                known, value = self.setting(c["setting"])
                if not known:
                    return c["setting"]
                if not compare_value(value, c["op"], c.get("value")):
                    return "off"
        return None

    def step_mask(self, rule: Rule, bindings: dict[str, str], steps: np.ndarray) -> np.ndarray:
        mask = np.ones(len(steps), bool)
        for c in rule.get("when", []):
            if "key" in c:
                other: Series | None = self.d.history.series.get(_concrete(c["key"], bindings, self.renamed))
                if other is None:
                    return np.zeros(len(steps), bool)
                mask &= compare_array(other.at(steps), c["op"], c.get("value"))
        return mask

    def rule(self, rule: Rule, key: str, match: Match) -> None:
        s = self.d.history.series[key]
        why = self.applies(rule, match.bindings)
        if why == "off":
            return
        if why is not None:
            self.d.skipped.append((rule, "setting", why))
            return
        kind = rule["kind"]
        if kind == "trend":
            finite = np.flatnonzero(~np.isnan(s.values))
            if len(finite) < rule["window"]:
                self.d.skipped.append((rule, "logs", rule["window"]))
                return
            spans = trend_windows(s.values[finite], rule["op"], rule["window"], rule["change"], self.book["noise"],
                                  self.book["holds"])
            ok = self.step_mask(rule, match.bindings, s.steps[finite])
            idx = [(int(finite[a]), int(finite[b])) for a, b in spans if ok[b]]
        else:
            x = s.values
            if kind == "flag":
                mask = compare_array(x, rule["op"], rule.get("value"))
            else:  # bounds or range: outside [lo, hi]
                lo = -np.inf if rule["lo"] is None else rule["lo"] - 1e-9 * max(1.0, abs(rule["lo"]))
                hi = np.inf if rule["hi"] is None else rule["hi"] + 1e-9 * max(1.0, abs(rule["hi"]))
                with np.errstate(invalid="ignore"):
                    mask = (x < lo) | (x > hi)
            if len(x) < rule["n"]:
                if rule["n"] > 1:
                    self.d.skipped.append((rule, "logs", rule["n"]))
                return
            mask &= self.step_mask(rule, match.bindings, s.steps)
            idx = runs(mask, rule["n"])
        if idx:
            spans = [(int(s.steps[a]), int(s.steps[b])) for a, b in idx]
            logs = sum(b - a + 1 for a, b in idx)
            self.d.findings.append(Finding(rule, match.metric, key, spans, logs, float(s.values[idx[0][0]]),
                                           float(s.values[idx[-1][1]])))


ORDER = {"bug": 0, "red_flag": 1, "warning": 2}


def diagnose(book: dict[str, Any], history: History, trainer: str | None = None, trl: str | None = None,
             settings: dict[str, Any] | None = None) -> Diagnosis:
    """Every rule of the line and trainer that logged ``history`` (or those named), evaluated on it. ``settings``:
    the run's configuration as far as known; the release's defaults of the trainer's crucial settings fill in."""
    line, t, known, unknown, alike = choose(book, history, trainer, trl)
    resolved = {k: (v, "default") for k, v in t["defaults"].items()}
    resolved.update({k: (v, "given") for k, v in (settings or {}).items()})
    d = Diagnosis(history, line, t, bool(trainer or trl), known, unknown, resolved, alike)
    run = _Run(book, d)
    for key in sorted(known):
        for rule in known[key].metric["rules"]:
            run.rule(rule, key, known[key])
    d.findings.sort(key=lambda f: (ORDER[f.severity], f.since, f.key, f.rule["id"]))
    return d
