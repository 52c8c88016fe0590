"""The pages of a line that are about the site, not one trainer: home, and "Which version am I on?"."""

from __future__ import annotations

from ..resolve.releases import line_for, release_key
from . import paths
from .env import MARKDOWN
from .view import View


def render_home(view: View) -> str:
    trainers = [{"class_": t.cls.name, "href": f"{t.id}/index.md", "count": len(t.metrics)}
                for t in view.edition.trainers]
    removed = [{"class_": gone.trainer.classes[-1].name, "href": f"{gone.id}/index.md",
                "until": gone.trainer.until} for gone in view.edition.removed]
    return MARKDOWN.get_template("home.md.j2").render(**view.base(
        trainers=trainers, removed=removed, examples=f"{view.config.source_base}examples/",
        edit_url=view.edit_url(f"locales/{view.lang.code}/ui.yaml")))


def render_which_version(view: View) -> str:
    """Every TRL release, newest first, with the line to read for it."""
    cfg = view.config
    rows = []
    for release in reversed(cfg.trl_releases):
        line = line_for(cfg, release)
        edition = next(e for e in view.atlas.editions if e.line == line)
        missing = [t.cls.name for t in edition.trainers if release_key(release) < release_key(t.trainer.since)]
        remark = view.t("which_missing", classes=", ".join(f"`{c}`" for c in missing)) if missing else (
            "" if release == line.trl else view.t("which_see_changes", trl=line.trl))
        # root-relative: another line is outside this line's docs, so mkdocs cannot check it
        rows.append({"release": release, "line": line, "remark": remark,
                     "href": f"{paths.line_path(cfg, line)}{view.lang.prefix}"})
    return MARKDOWN.get_template("which_version.md.j2").render(**view.base(
        rows=rows, edit_url=view.edit_url("atlas.yml")))
