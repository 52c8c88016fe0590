"""Orchestration: collect -> render every (version, language) -> mkdocs build -> atomic swap into site/."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from .cheatsheet import render_cheatsheets_page, sheet_trainers
from .collect import Atlas, collect
from .config import Version
from .errors import BuildError
from .glossary_pages import entries_sorted, entry_path, render_glossary_entry, render_glossary_index
from .i18n_pages import GUIDE_PAGE, STATUS_PAGE, has_guide, render_guide, render_status
from .mathtex import KATEX_DIST
from .pdf import render_sheets, write_files
from .render import (
    Ctx,
    metrics_api,
    page_path,
    render_coverage,
    render_home,
    render_metric,
    render_trainer_index,
    render_which_version,
)

ASSETS = Path(__file__).with_name("assets")
PROJECT = Path(__file__).resolve().parents[1]  # where the generator is installed (editable): its hooks, dictionaries


def generate_docs(atlas: Atlas, version: Version, docs: Path, langs: list[str]) -> int:
    """Write the Markdown of one version into ``docs``; return the number of pages written."""
    cfg = atlas.config
    written = 0

    def write(rel: str, text: str) -> None:
        nonlocal written
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written += 1

    for lang in langs:
        ctx = Ctx(atlas, lang, version)
        sfx = "" if lang == cfg.default_lang else f".{lang}"
        write(f"index{sfx}.md", render_home(ctx))
        write(f"versions{sfx}.md", render_which_version(ctx))
        if sheet_trainers(ctx):
            write(f"cheatsheets{sfx}.md", render_cheatsheets_page(ctx))
        for trainer in version.trainers:
            write(f"{trainer}/index{sfx}.md", render_trainer_index(ctx, trainer))
            write(f"{trainer}/conformance{sfx}.md", render_coverage(ctx, trainer))
        for item in ctx.items():
            write(page_path(item.model, lang, cfg.default_lang), render_metric(ctx, item))
        if atlas.glossary:
            write(f"glossary/index{sfx}.md", render_glossary_index(ctx))
            for item in atlas.glossary:
                write(entry_path(item.model, lang, cfg.default_lang), render_glossary_entry(ctx, item))
        write(f"{STATUS_PAGE}{sfx}.md", render_status(ctx))
        if has_guide(atlas.root):
            write(f"{GUIDE_PAGE}{sfx}.md", render_guide(ctx))
    _copy_assets(docs / "assets")
    return written


def _copy_assets(dest: Path) -> None:
    shutil.copytree(ASSETS, dest, dirs_exist_ok=True)
    katex = KATEX_DIST
    (dest / "katex").mkdir(parents=True, exist_ok=True)
    shutil.copy2(katex / "katex.min.css", dest / "katex" / "katex.min.css")
    shutil.copytree(katex / "fonts", dest / "katex" / "fonts", dirs_exist_ok=True)


def _resolve(root: Path, rel: str) -> Path:
    """Files of the generator package come from its installation; anything else from the sources root."""
    return PROJECT / rel if rel.startswith("generator/") else root / rel


def mkdocs_config(atlas: Atlas, version: Version, docs: Path, out: Path, langs: list[str]) -> dict[str, Any]:
    """The base mkdocs.yml with this version's paths, URL, nav and languages filled in."""
    root = atlas.root
    cfg = atlas.config
    base = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    base["docs_dir"] = str(docs)
    base["site_dir"] = str(out)
    base["site_url"] = f"{cfg.site_url}{version.name}/"
    base["site_name"] = cfg.site_name
    if "custom_dir" in base["theme"]:
        base["theme"]["custom_dir"] = str(_resolve(root, base["theme"]["custom_dir"]))
    base["hooks"] = [str(_resolve(root, h)) for h in base.get("hooks", [])]
    base["nav"] = ["index.md", "versions.md"] + [
        {t.upper(): [f"{t}/index.md", f"{t}/conformance.md"]} for t in version.trainers
    ]
    if sheet_trainers(Ctx(atlas, cfg.default_lang, version)):
        base["nav"].append("cheatsheets.md")
    glossary = entries_sorted(Ctx(atlas, cfg.default_lang, version))
    if glossary:  # a section titled in each language through i18n's nav_translations
        base["nav"].append({atlas.ui[cfg.default_lang]["glossary_title"]: ["glossary/index.md"] + [
            entry_path(it.model, cfg.default_lang, cfg.default_lang) for it in glossary]})
    contribute = ([f"{GUIDE_PAGE}.md"] if has_guide(root) else []) + [f"{STATUS_PAGE}.md"]
    base["nav"].append({atlas.ui[cfg.default_lang]["contribute_title"]: contribute})
    base["not_in_nav"] = "\n".join(f"/{t}/**" for t in version.trainers)
    base.setdefault("extra", {})["version_root"] = f"{urlparse(cfg.site_url).path}{version.name}/"
    base["extra"]["not_found"] = [
        {
            "code": lang.code,
            "prefix": "" if lang.default else f"{lang.code}/",
            **{
                k: atlas.ui[lang.code][f"not_found_{k}"].format(trl=version.trl)
                for k in ("title", "text", "home", "versions")
            },
        }
        for lang in cfg.languages
    ]
    for plugin in base["plugins"]:
        if isinstance(plugin, dict) and "search" in plugin:
            plugin["search"]["jieba_dict_user"] = str(_resolve(root, plugin["search"]["jieba_dict_user"]))
        if isinstance(plugin, dict) and "i18n" in plugin:
            if langs != cfg.lang_codes and len(langs) == 1:
                # preview of one language: mkdocs-static-i18n builds it alone (at the version root)
                plugin["i18n"]["build_only_locale"] = langs[0]
            plugin["i18n"]["languages"] = [
                {"locale": lang.code, "name": lang.name, "default": lang.default,
                 "build": lang.code in langs or lang.default,
                 "site_name": atlas.ui[lang.code]["site_name"],
                 "nav_translations": {atlas.ui[cfg.default_lang][k]: atlas.ui[lang.code][k]
                                      for k in ("glossary_title", "contribute_title")},
                 "site_description": atlas.ui[lang.code]["site_description"]}
                for lang in cfg.languages
            ]
    return base


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def run_mkdocs(config: dict[str, Any], config_path: Path) -> None:
    """mkdocs build in strict mode; any warning (a broken link, a bad anchor) fails it with the warnings listed."""
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


def _write_root(atlas: Atlas, site: Path, versions: list[Version]) -> None:
    latest = atlas.config.versions[0]
    entries = [
        {"version": v.name, "title": f"TRL {v.name}", "aliases": ["latest"] if v == latest else []}
        for v in versions
    ]
    (site / "versions.json").write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    target = f"{latest.name}/" if latest in versions else f"{versions[0].name}/"
    if latest in versions:
        _write_alias(site, latest.name, "latest")
    (site / "index.html").write_text(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>RL Metrics Atlas</title>"
        f"<meta http-equiv=\"refresh\" content=\"0; url={target}\"><link rel=\"canonical\" href=\"{target}\">"
        f"</head><body><a href=\"{target}\">RL Metrics Atlas</a></body></html>\n", encoding="utf-8")


def _redirect(target: str) -> str:
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>RL Metrics Atlas</title>"
            f"<meta http-equiv=\"refresh\" content=\"0; url={target}\"><link rel=\"canonical\" href=\"{target}\">"
            f"</head><body><a href=\"{target}\">{target}</a></body></html>\n")


def _write_alias(site: Path, version: str, alias: str) -> None:
    """``site/<alias>/...``: one small redirect per page of ``version``, so deep links to the alias keep working."""
    for page in (site / version).rglob("index.html"):
        rel = page.parent.relative_to(site / version)
        depth = len(rel.parts) + 1
        dest = site / alias / rel / "index.html"
        dest.parent.mkdir(parents=True, exist_ok=True)
        target = "../" * depth + version + "/" + ("/".join(rel.parts) + "/" if rel.parts else "")
        dest.write_text(_redirect(target), encoding="utf-8")


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


def build_site(root: Path, site_dir: Path | None = None, versions: list[str] | None = None,
               langs: list[str] | None = None, atlas: Atlas | None = None) -> Path:
    """Validate everything, build every requested version and language, then publish atomically."""
    atlas = atlas or collect(root)
    cfg = atlas.config
    chosen = [v for v in cfg.versions if not versions or v.name in versions]
    if versions and len(chosen) != len(versions):
        raise SystemExit(f"unknown version(s): {sorted(set(versions) - {v.name for v in chosen})}")
    langs = langs or cfg.lang_codes
    site = (site_dir or atlas.root / "site").resolve()
    work_root = atlas.root / "build"
    work_root.mkdir(exist_ok=True)
    remove_stale_work(work_root)
    sheets = render_sheets(atlas, chosen, langs)  # first: a sheet that does not fit fails the build at once
    work = Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=work_root))  # the owner's pid: see below
    try:
        out = work / "site"
        for version in chosen:
            docs = work / "docs" / version.name
            generate_docs(atlas, version, docs, langs)
            run_mkdocs(
                mkdocs_config(atlas, version, docs, out / version.name, langs), work / f"mkdocs-{version.name}.yml"
            )
            api = out / version.name / "api"
            api.mkdir(parents=True, exist_ok=True)
            payload = metrics_api(atlas, version, f"{cfg.site_url}{version.name}/")
            (api / "metrics.json").write_text(
                json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
        write_files(sheets, out)  # the cheat-sheets, inside the work folder before the swap
        _write_root(atlas, out, chosen)
        site.parent.mkdir(parents=True, exist_ok=True)
        publish(out, site)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return site
