"""collect(): load and validate every source of a checkout, or raise SourceErrors with all problems found."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, cache_dir
from .config import Config, Term, load_config, load_terms, load_ui
from .errors import SourceError, SourceErrors
from .load import Loaded, load_metrics
from .mathtex import render_many, short_error
from .snippets import check_snippets
from .validate import check_all


@dataclass(frozen=True)
class Atlas:
    """Everything rendering needs, already validated. Rendering never reads YAML."""

    root: Path
    config: Config
    metrics: list[Loaded]
    ui: dict[str, dict[str, str]]
    terms: dict[str, dict[str, Term]]
    math: dict[tuple[str, bool], str] = field(default_factory=dict)


def _math_jobs(items: list[Loaded]) -> list[tuple[Loaded, tuple[str | int, ...], str, bool]]:
    jobs = []
    for it in items:
        f = it.model.formula
        jobs.append((it, ("formula", "tex"), f.tex, True))
        jobs += [(it, ("formula", "symbols", i, "tex"), s.tex, False) for i, s in enumerate(f.symbols)]
    return jobs


def _missing_ui(config: Config, ui: dict[str, dict[str, str]]) -> list[SourceError]:
    reference = ui.get(config.default_lang, {})
    return [
        SourceError(f"locales/{lang}/ui.yaml", 1, key, f"missing {lang} translation of UI string '{key}'")
        for lang in config.complete_langs if lang in ui
        for key in reference if not str(ui[lang].get(key, "")).strip()
    ]


def collect(root: Path, run_snippets: bool = True, use_cache: bool = True) -> Atlas:
    root = root.resolve()
    cache = Cache(cache_dir(root) / "results.json" if use_cache else None)
    errors: list[SourceError] = []
    config = load_config(root)
    terms, ui = {}, {}
    for lang in config.lang_codes:
        try:
            terms[lang] = load_terms(root, lang)
            ui[lang] = load_ui(root, lang)
        except SourceErrors as exc:
            errors += exc.errors
    errors += _missing_ui(config, ui)
    metrics, docs, errs = load_metrics(root)
    errors += errs + check_all(metrics, docs, config, terms)
    jobs = _math_jobs(metrics)
    rendered = render_many([(tex, display) for _, _, tex, display in jobs], cache)
    math: dict[tuple[str, bool], str] = {}
    for (it, loc, tex, display), res in zip(jobs, rendered):
        if res.error is not None:
            field_ = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in loc).replace(".[", "[")
            errors.append(SourceError(it.path, it.doc.line_of(loc), field_, f"invalid LaTeX: {short_error(res.error)}"))
        else:
            math[(tex, display)] = res.html or ""
    if run_snippets:
        errors += check_snippets(metrics, cache=cache)
    cache.save()
    if errors:
        raise SourceErrors(errors)
    return Atlas(root, config, metrics, ui, terms, math)
