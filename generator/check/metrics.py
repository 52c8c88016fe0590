"""Rules on metric files, alone and together: their trainer and category, what a page would show inconsistently,
one file per key at its own path, and references to other metrics."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SourceError, did_you_mean
from ..read.load import Loaded
from ..resolve.variants import each
from .snippets import defines
from .symbols import check_symbols
from .text import check_plain, err

_COMPARISONS = {">", ">=", "<", "<=", "==", "!="}


def check_metric(item: Loaded, trainers: dict[str, Loaded], declared: set[str]) -> list[SourceError]:
    """The rules on one valid metric file (``trainers``: the valid trainer files, by folder; ``declared``: the
    folders that have a trainer file, valid or not, whose own errors are reported already)."""
    m, doc = item.model, item.doc
    errors = []
    trainer = trainers.get(m.trainer)
    if trainer is None and m.trainer not in declared:
        hint = did_you_mean(m.trainer, sorted(trainers)) or f" (there is no metrics/{m.trainer}/trainer.yaml)"
        errors.append(err(doc, ("trainer",), f"unknown trainer '{m.trainer}'{hint}"))
    elif trainer is not None:
        ids = trainer.model.category_ids()
        if m.category not in ids:
            errors.append(err(doc, ("category",), f"unknown category '{m.category}'" + did_you_mean(m.category, ids)))
    for loc, conformance, _ in each(m, "conformance"):
        if not conformance.checked and conformance.reason is None:
            errors.append(err(doc, loc, "say why the metric is not conformance-checked (reason)"))
        if conformance.checked and conformance.reason is not None:
            errors.append(err(doc, loc + ("reason",), "a reason is shown only when `checked` is false; remove it"))
    for loc, healthy, _ in each(m, "healthy"):
        for i, flag in enumerate(healthy.red_flags):
            if flag.op in _COMPARISONS and flag.value is None:
                errors.append(err(doc, loc + ("red_flags", i, "op"), f"op '{flag.op}' needs a value"))
        lo, hi, rng = healthy.bounds.min, healthy.bounds.max, healthy.range
        if rng and ((lo is not None and rng.min is not None and rng.min < lo)
                    or (hi is not None and rng.max is not None and rng.max > hi)):
            errors.append(err(doc, loc + ("range",), "healthy range lies outside the mathematical bounds"))
    for loc, snip, _ in each(m, "snippet"):
        if not defines(snip.code, snip.function):
            errors.append(err(doc, loc + ("function",), f"the code defines no function '{snip.function}'"))
    return errors + check_symbols(item) + check_plain(item)


def home(item: Loaded) -> str:
    """Where the file of a metric belongs: ``metrics/<trainer>/<key without braces>.yaml``."""
    return f"metrics/{item.model.trainer}/{item.model.slug}.yaml"


def check_metrics(items: Sequence[Loaded], trainers: dict[str, Loaded], declared: set[str]) -> list[SourceError]:
    """Every rule on the valid metric files: each alone, one file per key at its home, references resolve."""
    errors: list[SourceError] = []
    by_id: dict[str, Loaded] = {}
    # a file at its key's own path is the original; any other file with that key is the duplicate
    for item in sorted(items, key=lambda it: it.path != home(it)):
        errors += check_metric(item, trainers, declared)
        m = item.model
        if (first := by_id.get(m.id)) is not None:
            errors.append(err(item.doc, ("key",),
                              f"duplicate metric '{m.id}' (also in {first.path}:{first.line('key')})"))
            continue
        by_id[m.id] = item
        if item.path != home(item) and m.trainer in trainers:  # an unknown trainer is reported already
            errors.append(err(item.doc, ("key",), f"the file of key '{m.key}' must be {home(item)}"))
    ids = sorted(by_id)
    for item in items:
        for loc, related, _ in each(item.model, "related"):
            for i, ref in enumerate(related):
                if ref not in by_id:
                    errors.append(err(item.doc, loc + (i,), f"unknown metric '{ref}'" + did_you_mean(ref, ids)))
    return errors
