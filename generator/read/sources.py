"""read_sources(): every source file of a checkout, parsed and validated file by file.

What cannot be read or does not fit its schema is recorded as errors (with file and line) and left out of the
models; only a broken atlas.yml stops reading at once, since nothing else can be read without it. Rules that span
files are `check`'s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..cache import cache_dir
from ..errors import SourceError, SourceErrors
from . import parsed
from .config import Config, Term, load_config, load_terms, load_ui
from .explainer import Explainer
from .glossary import GlossaryEntry
from .load import Loaded, load_files
from .metric import Metric
from .trainer import Trainer
from .translations import Stamps, load_stamps
from .yamlsrc import Document

TRAINER_FILE = "trainer.yaml"
EXPLAINERS = "explainers"  # the folder of a trainer's explainer pages


@dataclass(frozen=True)
class Sources:
    """Everything a checkout holds, as models. ``ui`` gives every language every UI string (a language in progress
    shows the default language's where it has none yet)."""

    root: Path
    config: Config
    ui: dict[str, dict[str, str]]
    terms: dict[str, dict[str, Term]]
    stamps: dict[str, Stamps]  # per translated language: what its translations were made from
    trainers: tuple[Loaded, ...]
    metrics: tuple[Loaded, ...]
    explainers: tuple[Loaded, ...]
    glossary: tuple[Loaded, ...]
    docs: tuple[Document, ...]  # every parsed translated file, valid or not (for rules on raw text)
    errors: tuple[SourceError, ...]  # what could not be read or does not fit its schema

    @property
    def translated(self) -> tuple[Loaded, ...]:
        """Every valid file with translated text: the metrics, the glossary, the trainers, then the explainers."""
        return self.metrics + self.glossary + self.trainers + self.explainers


def metric_files(root: Path) -> list[Path]:
    """``metrics/<trainer>/**/*.yaml``, except each trainer's own ``trainer.yaml`` and its ``explainers/``."""
    folder = root / "metrics"
    return [p for p in sorted(folder.rglob("*.y*ml"))
            if not (p.name == TRAINER_FILE and p.parent.parent == folder)
            and p.relative_to(folder).parts[1] != EXPLAINERS]


def explainer_files(root: Path) -> list[Path]:
    return sorted((root / "metrics").glob(f"*/{EXPLAINERS}/*.y*ml"))


def trainer_files(root: Path) -> list[Path]:
    return sorted((root / "metrics").glob(f"*/{TRAINER_FILE}"))


def _locales(root: Path, config: Config) -> tuple[dict, dict, dict, list[SourceError]]:
    """UI strings, term bases and translation stamps of every language, and what is wrong with them."""
    terms: dict[str, dict[str, Term]] = {}
    ui: dict[str, dict[str, str]] = {}
    stamps: dict[str, Stamps] = {}
    errors: list[SourceError] = []
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
    reference = ui.get(config.default_lang, {})
    errors += [SourceError(f"locales/{code}/ui.yaml", 1, key, f"missing {code} translation of UI string '{key}'")
               for code in config.complete_langs if code in ui
               for key in reference if not str(ui[code].get(key, "")).strip()]
    return terms, {code: {**reference, **strings} for code, strings in ui.items()}, stamps, errors


def read_sources(root: Path, use_cache: bool = True) -> Sources:
    """Every source of the checkout ``root``; the files parsed before come from `.cache/atlas/parsed.pickle` unless
    ``use_cache`` is off (`parsed`)."""
    root = root.resolve()
    with parsed.reading(cache_dir(root) / "parsed.pickle" if use_cache else None):
        config = load_config(root)
        terms, ui, stamps, errors = _locales(root, config)
        trainers, trainer_docs, errs_t = load_files(trainer_files(root), root, Trainer)
        metrics, metric_docs, errs_m = load_files(metric_files(root), root, Metric)
        explainers, explainer_docs, errs_e = load_files(explainer_files(root), root, Explainer)
        glossary, glossary_docs, errs_g = load_files(sorted((root / "glossary").glob("*.y*ml")), root, GlossaryEntry)
    return Sources(root, config, ui, terms, stamps, tuple(trainers), tuple(metrics), tuple(explainers),
                   tuple(glossary), tuple(metric_docs + glossary_docs + trainer_docs + explainer_docs),
                   tuple(errors + errs_t + errs_m + errs_e + errs_g))
