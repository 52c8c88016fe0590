"""collect(): load and validate every source of a checkout, or raise SourceErrors with all problems found."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .cache import Cache, cache_dir
from .config import Config, Term, load_config, load_terms, load_ui
from .errors import SourceError, SourceErrors
from .glossary import check_glossary, load_glossary
from .i18n import Stamps, load_stamps
from .load import Loaded, load_metrics
from .mathtex import render_many, short_error
from .snippets import check_snippets
from .validate import check_all, check_cheatsheets
from .versions import check_ranges
from .yamlsrc import dotted


@dataclass(frozen=True)
class Atlas:
    """Everything rendering needs, already validated. Rendering never reads YAML."""

    root: Path
    config: Config
    metrics: list[Loaded]
    ui: dict[str, dict[str, str]]
    terms: dict[str, dict[str, Term]]
    math: dict[tuple[str, bool], str] = field(default_factory=dict)
    glossary: list[Loaded] = field(default_factory=list)
    stamps: dict[str, Stamps] = field(default_factory=dict)  # per language: what its translations were made from

    @property
    def sources(self) -> list[Loaded]:
        """Every translated source file: the metrics, then the glossary."""
        return self.metrics + self.glossary


# \max, \log ... as a subscript or superscript: KaTeX emits a function-application operator inside <msub>
_OPERATOR_SCRIPT = re.compile(r"[_^]\{?\s*\\(max|min|log|exp|sup|inf|lim|arg|det|sin|cos)\b")


def _math_jobs(items: list[Loaded]) -> list[tuple[Loaded, tuple[str | int, ...], str, bool]]:
    jobs = []
    for it in items:
        formulas = [(("formula",), it.model.formula)] + [
            (("variants", i, "formula"), var.formula) for i, var in enumerate(it.model.variants) if var.formula]
        for loc, f in formulas:
            jobs.append((it, loc + ("tex",), f.tex, True))
            jobs += [(it, loc + ("symbols", i, "tex"), s.tex, False) for i, s in enumerate(f.symbols)]
    return jobs


def _missing_ui(config: Config, ui: dict[str, dict[str, str]]) -> list[SourceError]:
    """Complete languages have every UI string of the default language."""
    reference = ui.get(config.default_lang, {})
    return [
        SourceError(f"locales/{lang}/ui.yaml", 1, key, f"missing {lang} translation of UI string '{key}'")
        for lang in config.complete_langs if lang in ui
        for key in reference if not str(ui[lang].get(key, "")).strip()
    ]


def _check_versions(config: Config) -> list[SourceError]:
    """Site versions name real releases and trainers, and their `covers` ranges tile the releases without gaps."""
    errors = []
    for i, ver in enumerate(config.versions):
        for release in (ver.trl, *[c for c in ver.covers if c]):
            if release not in config.trl_releases:
                errors.append(SourceError("atlas.yml", 1, f"versions[{i}]", f"'{release}' is not a TRL release"))
        for t in ver.trainers:
            if t not in config.trainers:
                errors.append(SourceError("atlas.yml", 1, f"versions[{i}].trainers", f"unknown trainer '{t}'"))
    starts = {ver.covers[0] for ver in config.versions}
    for i, ver in enumerate(config.versions):
        if ver.covers[1] is not None and ver.covers[1] not in starts:
            errors.append(SourceError("atlas.yml", 1, f"versions[{i}].covers",
                                      f"releases from {ver.covers[1]} on are covered by no version"))
    return errors


def collect(root: Path, run_snippets: bool = True, use_cache: bool = True) -> Atlas:
    root = root.resolve()
    cache = Cache(cache_dir(root) / "results.json" if use_cache else None)
    errors: list[SourceError] = []
    config = load_config(root)
    terms, ui, stamps = {}, {}, {}
    known: list[str] | None = None
    for lang in sorted(config.languages, key=lambda lang: not lang.default):  # the default language first
        try:
            terms[lang.code] = load_terms(root, lang.code)
            ui[lang.code] = load_ui(root, lang.code, required=lang.status == "complete", known=known)
            known = known or list(ui[lang.code])
            if not lang.default:
                stamps[lang.code] = load_stamps(root, lang.code)
        except SourceErrors as exc:
            errors += exc.errors
    errors += _missing_ui(config, ui)
    # a language in progress shows the English of any UI string it does not have yet
    ui = {lang: {**ui.get(config.default_lang, {}), **strings} for lang, strings in ui.items()}
    metrics, docs, errs = load_metrics(root)
    glossary, glossary_docs, errs_g = load_glossary(root)
    errors += errs + errs_g + check_all(metrics, docs + glossary_docs, config, terms)
    errors += check_glossary(glossary, glossary_docs, config, terms)
    errors += check_cheatsheets(metrics, config, ui)
    errors += [e for it in metrics for e in check_ranges(it, config.trl_releases)]
    errors += _check_versions(config)
    jobs = _math_jobs(metrics) + [(it, ("formula",), it.model.formula, True) for it in glossary if it.model.formula]
    for it, loc, tex, _ in jobs:
        if m := _OPERATOR_SCRIPT.search(tex):
            errors.append(SourceError(it.path, it.doc.line_of(loc), dotted(loc),
                                      f"invalid LaTeX: '{m.group(0)}' renders as invalid MathML (an operator in a "
                                      f"sub/superscript); write \\mathrm{{{m.group(1)}}}"))
    rendered = render_many([(tex, display) for _, _, tex, display in jobs], cache)
    math: dict[tuple[str, bool], str] = {}
    for (it, loc, tex, display), res in zip(jobs, rendered, strict=True):
        if res.error is not None:
            errors.append(
                SourceError(it.path, it.doc.line_of(loc), dotted(loc), f"invalid LaTeX: {short_error(res.error)}")
            )
        else:
            math[(tex, display)] = res.html or ""
    if run_snippets:
        errors += check_snippets(metrics, cache=cache)
    cache.save()
    if errors:
        raise SourceErrors(errors)
    return Atlas(root, config, metrics, ui, terms, math, glossary, stamps)
