"""Where things are in a version of the site. Generated Markdown is named for the default language
(``grpo/kl.md``); mkdocs-static-i18n builds ``grpo/kl.<code>.md`` at ``<code>/grpo/kl/`` (`Language.prefix`,
`Language.suffix`), and a relative link between two default-language names reaches the reader's language."""

from __future__ import annotations

import functools
import posixpath
from typing import Any
from urllib.parse import urlparse

from ..read.config import Config, Language, Line

GLOSSARY = "glossary"
STATUS_PAGE = "translation-status"
GUIDE_PAGE = "translating"
CHECK_PAGE = "check-my-run"  # atlas doctor and its training callback


def metric_doc(m: Any) -> str:
    """The page of a metric, e.g. ``grpo/clip_ratio/low_mean.md``."""
    return f"{m.trainer}/{m.slug}.md"


def history_doc(m: Any) -> str:
    """The page of a metric's ranges that no line describes, e.g. ``grpo/kl/history.md`` (beside the folder of the
    metric's keys: no key ends in ``history`` under another key of its trainer, `pages` refuses a clash)."""
    return f"{m.trainer}/{m.slug}/history.md"


def explainer_doc(explainer: Any) -> str:
    """The page of an explainer, e.g. ``ppo/explainers/two_entropies.md``."""
    return f"{explainer.trainer}/{explainer.slug}.md"


def symptoms_doc(trainer_id: str) -> str:
    """The symptom index of a trainer, e.g. ``grpo/symptoms.md``."""
    return f"{trainer_id}/symptoms.md"


def entry_doc(entry: Any) -> str:
    """The page of a glossary entry, e.g. ``glossary/policy.md``."""
    return f"{GLOSSARY}/{entry.id}.md"


def in_language(doc: str, lang: Language) -> str:
    """The file of ``doc`` in ``lang``: ``grpo/kl.md`` -> ``grpo/kl.zh.md``."""
    return doc[:-3] + lang.suffix + ".md"


def folder(doc: str) -> str:
    """The URL folder mkdocs builds ``doc`` at: ``grpo/kl.md`` -> ``grpo/kl/``, ``grpo/index.md`` -> ``grpo/``."""
    return doc[: -len("index.md")] if doc.endswith("index.md") else doc[:-3] + "/"


@functools.lru_cache(maxsize=1 << 16)
def rel(from_doc: str, to_doc: str) -> str:
    """Relative link from the page ``from_doc`` to ``to_doc`` (both docs paths); remembered, as every line and
    language asks for the same links (posixpath.relpath took a tenth of the rendering)."""
    return posixpath.relpath(to_doc, posixpath.dirname(from_doc) or ".")


def rel_dir(from_dir: str, to: str) -> str:
    """Relative link from the URL folder ``from_dir`` to the site path ``to`` (a folder keeps its slash)."""
    out = posixpath.relpath(to, from_dir or ".")
    return out + "/" if to.endswith("/") and not out.endswith("/") else out


def line_url(config: Config, line: Line) -> str:
    """Absolute URL of a line's root: ``<site_url><line>/``."""
    return f"{config.site_url}{line.name}/"


def line_path(config: Config, line: Line) -> str:
    """Root-relative URL of a line's root (``/1.16/``): for links from one line to another, which mkdocs, building
    one line at a time, must not check."""
    return f"{urlparse(config.site_url).path}{line.name}/"
