"""Rules on the machine-checkable part of `healthy` (what `atlas doctor` and its callback evaluate): each red flag's
parameters fit its kind, its conditions name real keys and settings and compare what can be compared, the
troubleshooting item it points to exists, and every symptom group has its title in the UI strings."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import SourceError, did_you_mean
from ..read.load import Loaded
from ..read.metric import Condition, Metric
from ..resolve.variants import each, span
from .text import err

TRENDS = {"rising", "falling"}
ORDERED = {">", ">=", "<", "<="}
GROUP_PREFIX = "symptom_group_"  # UI string of a symptom group's title
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _troubleshooting_at(m: Metric, index: int | None) -> int:
    """How many troubleshooting items a page shows in the range of variant ``index`` (None: the metric's own)."""
    if index is not None and m.variants[index].troubleshooting is not None:
        return len(m.variants[index].troubleshooting)
    return len(m.troubleshooting)


def _condition(item: Loaded, loc: tuple, cond: Condition, keys: list[str], flagged: str) -> list[SourceError]:
    doc = item.doc
    given = [name for name in ("setting", "logged", "key") if getattr(cond, name) is not None]
    if len(given) != 1:
        return [err(doc, loc, "give exactly one of `setting`, `logged` or `key`" + (
            f" (this one gives {', '.join(given)})" if given else ""))]
    kind = given[0]
    errors = []
    if kind in ("logged", "key"):
        name = getattr(cond, kind)
        if name not in keys:
            errors.append(err(doc, loc + (kind,), f"unknown key '{name}' of this trainer" + did_you_mean(name, keys)))
        missing = set(_PLACEHOLDER.findall(name)) - set(_PLACEHOLDER.findall(flagged))
        if missing:
            errors.append(err(doc, loc + (kind,), f"{', '.join(sorted(missing))} stands for a part of the flagged "
                                                  f"key, and '{flagged}' has none"))
    if kind == "logged":
        if cond.op is not None or cond.value is not None:
            errors.append(err(doc, loc + ("op" if cond.op is not None else "value",),
                              "`logged` takes no op or value: it holds when the run logs the key"))
        return errors
    if cond.op is None:
        return errors + [err(doc, loc, f"a condition on a {kind} needs an op")]
    if cond.op == "nan":
        if kind == "setting":
            errors.append(err(doc, loc + ("op",), "a setting is never NaN; use a comparison"))
        elif cond.value is not None:
            errors.append(err(doc, loc + ("value",), "op 'nan' takes no value"))
        return errors
    if cond.value is None:
        return errors + [err(doc, loc + ("op",), f"op '{cond.op}' needs a value")]
    if cond.op in ("in", "not_in") and not isinstance(cond.value, list):
        errors.append(err(doc, loc + ("value",), f"op '{cond.op}' needs a list of values"))
    elif cond.op not in ("in", "not_in") and isinstance(cond.value, list):
        errors.append(err(doc, loc + ("value",), f"op '{cond.op}' compares with one value, not a list"))
    elif cond.op in ORDERED and (isinstance(cond.value, bool) or not isinstance(cond.value, int | float)):
        errors.append(err(doc, loc + ("value",), f"op '{cond.op}' compares numbers, not {cond.value!r}"))
    elif kind == "key" and any(isinstance(v, str) for v in (cond.value if isinstance(cond.value, list)
                                                                 else [cond.value])):
        errors.append(err(doc, loc + ("value",), "a logged value is a number; compare it with numbers"))
    return errors


def check_rules(item: Loaded, keys: Sequence[str]) -> list[SourceError]:
    """The rules of one valid metric file (``keys``: every key of its trainer, templates kept)."""
    m, doc = item.model, item.doc
    keys = sorted(keys)
    errors = []
    for loc, healthy, index in each(m, "healthy"):
        items = _troubleshooting_at(m, index)
        for i, flag in enumerate(healthy.red_flags):
            at = loc + ("red_flags", i)
            if flag.op in TRENDS and flag.for_logs is not None:
                errors.append(err(doc, at + ("for_logs",), "a trend is measured over `window`, not `for_logs`"))
            if flag.op not in TRENDS:
                for name in ("window", "change"):
                    if getattr(flag, name) is not None:
                        errors.append(err(doc, at + (name,), f"only rising and falling have a `{name}` "
                                                             f"(a comparison holds `for_logs`)"))
            if flag.troubleshooting is not None and flag.troubleshooting > items:
                start, end = span(m, index)
                errors.append(err(doc, at + ("troubleshooting",),
                                  f"item {flag.troubleshooting} does not exist: the page of releases {start} to "
                                  f"{end or 'now'} has {items} troubleshooting item{'s' * (items != 1)}"))
            for j, cond in enumerate(flag.when):
                errors += _condition(item, at + ("when", j), cond, keys, m.key)
    return errors


def check_groups(item: Loaded, groups: Sequence[str]) -> list[SourceError]:
    """Every symptom group a troubleshooting item names has a title (``groups``: the known group ids)."""
    errors = []
    for loc, items, _ in each(item.model, "troubleshooting"):
        for i, tr in enumerate(items):
            if tr.group is not None and tr.group not in groups:
                errors.append(err(item.doc, loc + (i, "group"),
                                  f"unknown symptom group '{tr.group}'" + (did_you_mean(tr.group, list(groups))
                                  or f" (its title would be the UI string '{GROUP_PREFIX}{tr.group}')")))
    return errors


def check_all_rules(metrics: Sequence[Loaded], ui: dict[str, str]) -> list[SourceError]:
    """Every metric's rules, against the keys of its own trainer; groups against the UI strings ``ui`` (none when
    the UI strings could not be read, which is reported already)."""
    by_trainer: dict[str, list[str]] = {}
    for it in metrics:
        by_trainer.setdefault(it.model.trainer, []).append(it.model.key)
    groups = sorted(k[len(GROUP_PREFIX):] for k in ui if k.startswith(GROUP_PREFIX))
    return [e for it in metrics for e in check_rules(it, by_trainer[it.model.trainer])
            + (check_groups(it, groups) if ui else [])]
