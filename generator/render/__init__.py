"""Render: an edition, in one language, as Markdown pages, cheat-sheet HTML and the JSON index. Never reads YAML;
every page of one (edition, language) shares one `View`."""
