"""Check: every rule over the sources, in one entry point. `check()` reports every problem of a checkout in one
run (`SourceErrors`, sorted by file and line) or hands rendering an `Atlas`: the sources, an edition per release
line, and the formulas rendered once."""

from __future__ import annotations

from pathlib import PurePosixPath

from ..cache import Cache
from ..errors import SourceErrors
from ..read.sources import TRAINER_FILE, Sources
from ..resolve.edition import editions
from .atlas import Atlas
from .deadtext import check_dead_text
from .explainers import check_explainers
from .glossary import check_glossary
from .latex import render_formulas
from .metrics import check_metrics
from .ranges import check_lines, check_metric_ranges, check_trainer_ranges
from .rules import check_all_rules
from .sheets import check_sheets
from .snippet_runs import check_snippets
from .text import check_plain, check_texts
from .trainers import check_trainers

__all__ = ["Atlas", "check"]


def check(sources: Sources, run_snippets: bool = True, cache: Cache | None = None) -> Atlas:
    """Run every rule on ``sources``; raise `SourceErrors` with all problems, or return the checked atlas.
    ``cache`` keeps KaTeX HTML and snippet results by content (see `cache`)."""
    cache = cache or Cache(None)
    cfg = sources.config
    trainers = {PurePosixPath(t.path).parent.name: t for t in sources.trainers}  # by folder: an id is checked
    releases = cfg.trl_releases
    errors = list(sources.errors) + check_lines(cfg)
    errors += check_texts(sources.docs, cfg, sources.terms)
    declared = {PurePosixPath(path).parent.name for path in [d.path for d in sources.docs] + [e.path for e in errors]
                if PurePosixPath(path).name == TRAINER_FILE}  # trainer files, valid or not
    errors += check_metrics(sources.metrics, trainers, declared)
    errors += check_all_rules(sources.metrics, sources.ui.get(cfg.default_lang, {}))
    errors += [e for it in sources.metrics for e in check_metric_ranges(it, releases)]
    errors += [e for it in sources.trainers for e in check_trainer_ranges(it, releases) + check_plain(it)]
    errors += check_trainers(trainers, sources.metrics)
    errors += check_sheets(sources.metrics, trainers)
    errors += check_glossary(sources.glossary, sources.docs, cfg, sources.terms)
    errors += check_explainers(sources.explainers, trainers, sorted(it.model.id for it in sources.metrics), releases)
    lines = editions(cfg, sources.trainers, sources.metrics, sources.glossary, sources.explainers)
    if not errors:  # a broken file shows less than it will once fixed: what is shown is known only then
        errors += check_dead_text(sources.translated, lines)
    math, errs = render_formulas(list(sources.metrics + sources.explainers), list(sources.glossary), cache)
    errors += errs
    if run_snippets:
        errors += check_snippets(list(sources.metrics + sources.explainers), cache=cache)
    cache.save()
    if errors:
        raise SourceErrors(errors)
    return Atlas(sources, lines, math)
