"""MkDocs hooks: per-page "edit this page" links to the YAML source, and accent-insensitive search in the languages
that ask for it (`fold_accents` in atlas.yml, passed as ``extra.fold_accents``: their folders)."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

_TAGS = re.compile(r"<[^>]+>")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    # every generated page carries the URL of the source it came from
    if edit_url := page.meta.get("edit_url"):
        page.edit_url = edit_url
    return markdown


def fold(text: str) -> str:
    """Text without diacritics: 'cắt ngưỡng' -> 'cat nguong'."""
    text = _TAGS.sub(" ", text).replace("đ", "d").replace("Đ", "D")
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


@event_priority(-200)  # after mkdocs-static-i18n (-100) has merged every language into one index
def on_post_build(config: Any, **kwargs: Any) -> None:
    path = Path(config["site_dir"]) / "search" / "search_index.json"
    if not path.exists():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    folders = tuple(config["extra"].get("fold_accents") or [])
    if not folders:
        return
    index["config"].setdefault("fields", {})["keywords"] = {"boost": 0.5}
    for doc in index["docs"]:
        if doc["location"].startswith(folders):
            doc["keywords"] = fold(doc.get("title", "") + " " + doc.get("text", ""))
    path.write_text(json.dumps(index, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
