"""A rule of `healthy` in words, in one language: what the metric page shows in its red flag table, and what
`atlas doctor` prints beside a finding. The defaults a rule leaves out are said too, so that a reader knows exactly
when the doctor reports it."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..read.config import Language
from ..read.metric import FOR_LOGS, TREND_CHANGE, TREND_WINDOW, Condition, RedFlag

T = Callable[..., str]  # a UI string by name, formatted (View.t)


def _value(v: object, lang: Language) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int | float):
        return lang.number(float(v))
    return json.dumps(v, ensure_ascii=False)


def _compare(t: T, lang: Language, op: str, value: object) -> str:
    if op == "nan":
        return t("op_nan")
    if op in ("in", "not_in"):
        values = ", ".join(f"`{_value(v, lang)}`" for v in value)  # type: ignore[union-attr]
        return t(f"rule_{op}", values=values)
    return f"`{op} {_value(value, lang)}`"


def condition_words(t: T, lang: Language, cond: Condition) -> str:
    if cond.logged is not None:
        return t("rule_if_logged", key=cond.logged)
    if cond.setting is not None:
        return t("rule_if_setting", setting=cond.setting, cmp=_compare(t, lang, cond.op or "==", cond.value))
    return t("rule_while_key", key=cond.key, cmp=_compare(t, lang, cond.op or "==", cond.value))


def for_logs(flag: RedFlag) -> int:
    """How many consecutive logged values a comparison or nan flag needs."""
    return flag.for_logs or (1 if flag.op == "nan" else FOR_LOGS)


def flag_words(t: T, lang: Language, flag: RedFlag, conditions: bool = True) -> str:
    """The flag as a short Markdown phrase: its test, its duration or window, then its conditions."""
    if flag.op in ("rising", "falling"):
        pct = f"{lang.number(round((flag.change or TREND_CHANGE) * 100, 6))}%"
        words = t("rule_trend", op=t(f"op_{flag.op}"), pct=pct, n=flag.window or TREND_WINDOW)
    else:
        words = _compare(t, lang, flag.op, flag.value)
        n = for_logs(flag)
        if n > 1:
            words = t("rule_for", rule=words, n=n)
    if conditions and flag.when:
        words += t("rule_join") + t("rule_join").join(condition_words(t, lang, c) for c in flag.when)
    return words


def bounds_words(t: T, lang: Language, lo: float | None, hi: float | None) -> str:
    """An interval of values: ``[lo, hi]``, ``≥ lo``, ``≤ hi`` or unbounded."""
    if lo is None and hi is None:
        return t("unbounded")
    if lo is not None and hi is not None:
        return lang.interval(lo, hi)
    return f"≥ {lang.number(lo)}" if lo is not None else f"≤ {lang.number(hi)}"  # type: ignore[arg-type]
