"""Rules on explainer pages: each at its own path under its trainer, naming metrics that exist, over real releases,
with a snippet that defines its function and a formula whose symbols occur in it."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SourceError, did_you_mean
from ..read.load import Loaded
from .snippets import defines
from .symbols import check_symbols
from .text import check_plain, err


def check_explainers(items: Sequence[Loaded], trainers: dict[str, Loaded], metric_ids: list[str],
                     releases: Sequence[str]) -> list[SourceError]:
    errors = []
    for item in items:
        e, doc = item.model, item.doc
        home = f"metrics/{e.trainer}/explainers/{e.id}.yaml"
        if e.trainer not in trainers:
            errors.append(err(doc, ("trainer",), f"unknown trainer '{e.trainer}'" + did_you_mean(e.trainer,
                                                                                                sorted(trainers))))
        elif item.path != home:
            errors.append(err(doc, ("id",), f"the file of explainer '{e.id}' must be {home}"))
        for i, ref in enumerate(e.metrics):
            if ref not in metric_ids:
                errors.append(err(doc, ("metrics", i), f"unknown metric '{ref}'" + did_you_mean(ref, metric_ids)))
        for name in ("since", "until"):
            if (release := getattr(e, name)) is not None and release not in releases:
                errors.append(err(doc, (name,), f"'{release}' is not a TRL release" + did_you_mean(release,
                                                                                                  list(releases))))
        if e.snippet is not None and not defines(e.snippet.code, e.snippet.function):
            errors.append(err(doc, ("snippet", "function"), f"the code defines no function '{e.snippet.function}'"))
        errors += check_symbols(item) + check_plain(item)
    return errors
