"""The mkdocs configuration of one line: the base mkdocs.yml with that line's paths, URL, navigation and
languages filled in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..install import project_file
from ..render import paths
from ..render.sheet import has_sheets
from ..render.trainer_pages import index_doc
from ..render.view import View

# navigation titles that are UI strings, translated per language by mkdocs-static-i18n
NAV_TITLES = ("glossary_title", "contribute_title", "translating_title")


def mkdocs_config(view: View, docs: Path, out: Path, langs: list[str], math: Path) -> dict[str, Any]:
    """``view``: the line in its default language (navigation titles are translated by mkdocs-static-i18n);
    ``math``: the formulas' HTML by placeholder (`render.mathref`), which the hooks put into the pages."""
    atlas, edition, cfg = view.atlas, view.edition, view.config
    root = atlas.root
    ui = atlas.ui[cfg.default_lang]
    base = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    base["docs_dir"] = str(docs)
    base["site_dir"] = str(out)
    base["site_url"] = paths.line_url(cfg, edition.line)
    base["site_name"] = cfg.site_name
    if "custom_dir" in base["theme"]:
        base["theme"]["custom_dir"] = str(project_file(base["theme"]["custom_dir"], root))
    base["hooks"] = [str(project_file(h, root)) for h in base.get("hooks", [])]
    nav: list[Any] = ["index.md", "versions.md"]
    nav += [{t.trainer.title: [index_doc(t)] + [paths.explainer_doc(e.model) for e in t.explainers]
             + [paths.symptoms_doc(t.id), f"{t.id}/conformance.md"]} for t in edition.trainers]
    nav += [{gone.trainer.title: [f"{gone.id}/index.md"]} for gone in edition.removed]
    if has_sheets(view):
        nav.append("cheatsheets.md")
    nav.append(f"{paths.CHECK_PAGE}.md")
    if edition.glossary:  # a section titled in each language through i18n's nav_translations
        nav.append({ui["glossary_title"]: [f"{paths.GLOSSARY}/index.md"]
                    + [paths.entry_doc(it.model) for it in view.glossary_sorted]})
    # the guide is English-only Markdown: its navigation title comes from the UI strings, not from its heading
    contribute = [{ui["translating_title"]: f"{paths.GUIDE_PAGE}.md"}] if (root / "TRANSLATING.md").is_file() else []
    nav.append({ui["contribute_title"]: contribute + [f"{paths.STATUS_PAGE}.md"]})
    base["nav"] = nav
    base["not_in_nav"] = "\n".join(f"/{t.id}/**" for t in edition.trainers)
    extra = base.setdefault("extra", {})
    extra["version_root"] = paths.line_path(cfg, edition.line)
    extra["not_found"] = [
        {"code": lang.code, "prefix": lang.prefix,
         **{k: atlas.ui[lang.code][f"not_found_{k}"].format(trl=edition.release)
            for k in ("title", "text", "home", "versions")}}
        for lang in cfg.languages
    ]
    extra["atlas_math"] = str(math)  # read by the hooks, like what follows
    extra["search_letters"] = {lang.code: lang.search_letters for lang in cfg.languages}
    # what a search result names as its section, by the page's first folder (after the language's)
    extra["search_sections"] = {
        f"{lang.prefix}{folder}": title
        for lang in cfg.languages
        for folder, title in [*((t.id, t.trainer.title) for t in edition.trainers),
                              (paths.GLOSSARY, atlas.ui[lang.code]["glossary_title"])]}
    for plugin in base["plugins"]:
        if isinstance(plugin, dict) and "i18n" in plugin:
            if langs != cfg.lang_codes and len(langs) == 1:
                # preview of one language: mkdocs-static-i18n builds it alone (at the version root)
                plugin["i18n"]["build_only_locale"] = langs[0]
            plugin["i18n"]["languages"] = [
                {"locale": lang.code, "name": lang.name, "default": lang.default,
                 "build": lang.code in langs or lang.default,
                 "site_name": atlas.ui[lang.code]["site_name"],
                 "nav_translations": {ui[k]: atlas.ui[lang.code][k] for k in NAV_TITLES},
                 "site_description": atlas.ui[lang.code]["site_description"]}
                for lang in cfg.languages
            ]
    return base
