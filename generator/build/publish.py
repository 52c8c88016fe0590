"""Putting a finished site in place: the files above the lines (versions.json, the root redirect, the `latest`
alias), the atomic swap into site/, and the clean-up after builds that were killed."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
from pathlib import Path

from ..read.config import Line


def _redirect(target: str, lang: str = "", title: str = "RL Metrics Atlas", text: str | None = None) -> str:
    attr = f' lang="{lang}"' if lang else ""
    return (f"<!doctype html><html{attr}><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"<meta http-equiv=\"refresh\" content=\"0; url={target}\"><link rel=\"canonical\" href=\"{target}\">"
            f"</head><body><a href=\"{target}\">{text or target}</a></body></html>\n")


def write_root(site: Path, lines: list[Line], latest: Line, lang: str) -> None:
    """``versions.json`` (Material's version selector), the root redirect (in the default language ``lang``) and,
    when the latest line is built, its ``latest`` alias."""
    entries = [{"version": line.name, "title": f"TRL {line.name}", "aliases": ["latest"] if line == latest else []}
               for line in lines]
    (site / "versions.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    target = f"{latest.name}/" if latest in lines else f"{lines[0].name}/"
    if latest in lines:
        write_alias(site, latest.name, "latest")
    (site / "index.html").write_text(_redirect(target, lang, text="RL Metrics Atlas"), encoding="utf-8")


def write_alias(site: Path, line: str, alias: str) -> None:
    """``site/<alias>/...``: one small redirect per page of ``line``, so deep links to the alias keep working."""
    for page in (site / line).rglob("index.html"):
        rel = page.parent.relative_to(site / line)
        depth = len(rel.parts) + 1
        dest = site / alias / rel / "index.html"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(_redirect("../" * depth + line + "/" + ("/".join(rel.parts) + "/" if rel.parts else "")),
                        encoding="utf-8")


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def publish(new: Path, site: Path) -> None:
    """Put ``new`` in place of ``site`` so that a reader never sees a partial site."""
    if site.exists() and _exchange(new, site):
        shutil.rmtree(new)
        return
    old = site.with_name(site.name + ".old")
    if site.exists():
        shutil.rmtree(old, ignore_errors=True)
        site.rename(old)
    new.rename(site)
    shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale_work(work_root: Path) -> None:
    """Delete the work folders (``build-<pid>-*``) of builds whose process is gone: a build killed with SIGKILL
    had no chance to clean up. A running build's folder is left alone."""
    for folder in work_root.glob("build-*"):
        owner = folder.name.split("-")[1]
        if folder.is_dir() and not (owner.isdigit() and _alive(int(owner))):
            shutil.rmtree(folder, ignore_errors=True)
