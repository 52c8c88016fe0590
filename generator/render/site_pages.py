"""The pages of a line that are about the site, not one trainer: home, and "Which version am I on?"."""

from __future__ import annotations

from ..resolve.releases import line_for, release_key
from . import paths
from .env import MARKDOWN
from .sheet import sheet_links
from .view import View


def _lines_with(view: View, trainer_id: str) -> list[dict[str, str]]:
    """The other lines that show a trainer, newest first, as root-relative links to its index there."""
    return [{"name": e.line.name, "href": f"{paths.line_path(view.config, e.line)}{view.lang.prefix}{trainer_id}/"}
            for e in view.atlas.editions_with(trainer_id) if e.line != view.edition.line]


def render_home(view: View) -> str:
    """Where a reader starts: search, every trainer of this line (its keys, the other lines that have it, its
    cheat-sheets), the symptom indexes and the doctor for a curve that looks wrong, how to read a page."""
    trainers = [{"title": t.trainer.title, "class_": t.cls.name, "href": f"{t.id}/index.md", "count": len(t.metrics),
                 "lines": _lines_with(view, t.id), "sheet": sheet_links(view, t, view.lang.prefix),
                 "symptoms": paths.symptoms_doc(t.id)}
                for t in view.edition.trainers]
    removed = [{"title": gone.trainer.title, "class_": gone.trainer.classes[-1].name, "href": f"{gone.id}/index.md",
                "until": gone.trainer.until, "lines": _lines_with(view, gone.id)} for gone in view.edition.removed]
    return MARKDOWN.get_template("home.md.j2").render(**view.base(
        trainers=trainers, removed=removed, examples=f"{view.config.source_base}examples/",
        check_href=f"{paths.CHECK_PAGE}.md", edit_url=view.edit_url(f"locales/{view.lang.code}/ui.yaml")))


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
