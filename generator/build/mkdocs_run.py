"""mkdocs build of one line in strict mode: any warning (a broken link, a bad anchor) fails it, with the warnings
listed in the error."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import yaml

from ..errors import BuildError


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def run_mkdocs(config: dict[str, Any], config_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    config_path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    logger = logging.getLogger("mkdocs")
    logger.setLevel(logging.WARNING)
    warnings = _Warnings()
    logger.addHandler(warnings)
    try:
        cfg = load_config(config_file=str(config_path), strict=True)
        cfg.plugins.on_startup(command="build", dirty=False)
        try:
            build(cfg)
        finally:
            cfg.plugins.on_shutdown()
    except Abort as exc:  # mkdocs' Abort is a SystemExit: turn it into an error that says why
        details = "; ".join(dict.fromkeys(warnings.messages)) or str(exc)
        raise BuildError(f"mkdocs build of {config.get('site_url')} failed in strict mode: {details}") from None
    finally:
        logger.removeHandler(warnings)
