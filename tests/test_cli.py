"""The `atlas` command line: `--root` before or after the command, and a one-line error for an unknown line or
language."""

from __future__ import annotations

import re

from generator.cli import main

from .conftest import copy_sources


def test_root_goes_before_or_after_the_command(mini_root, capsys):
    assert main(["--root", str(mini_root), "check", "--no-snippets"]) == 0
    assert main(["check", "--root", str(mini_root), "--no-snippets"]) == 0
    assert main(["i18n", "status", "--root", str(mini_root), "--lang", "zh"]) == 0
    assert "zh        complete" in capsys.readouterr().out


def test_an_unknown_line_or_language_is_one_line(mini_root, capsys):
    assert main(["pdf", "--root", str(mini_root), "--version", "1.61"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("error: --version 1.61: no such TRL release line (lines: 1.16, 1.12, 0.26")
    assert out.strip().endswith("(did you mean '1.16'?)") and len(out.strip().splitlines()) == 1
    assert main(["build", "--root", str(mini_root), "--lang", "fr"]) == 1
    assert capsys.readouterr().out.startswith("error: --lang fr: no such language (languages: en, zh, vi)")


def test_a_public_url_reaches_the_cheat_sheets(tmp_path, capsys):
    kl = "metrics/grpo/kl.yaml"  # a key on the cheat-sheet
    root = copy_sources(tmp_path / "src", [kl])
    text = (root / kl).read_text(encoding="utf-8")
    (root / kl).write_text(re.sub(r"(?m)^( *)related: \[.*\]$", r"\1related: []", text), encoding="utf-8")
    out = tmp_path / "site"
    url = "https://rl-metrics-atlas.github.io/atlas/"
    assert main(["pdf", "--root", str(root), "--version", "1.16", "--lang", "en", "--out", str(out),
                 "--site-url", url]) == 0, capsys.readouterr().out
    sheets = list(out.glob("1.16/cheatsheets/*/index.html"))
    assert sheets and all(f"{url}1.16/" in p.read_text(encoding="utf-8") for p in sheets)
    assert "127.0.0.1" not in sheets[0].read_text(encoding="utf-8")
    assert main(["build", "--root", str(root), "--site-url", "example.org"]) == 1
    assert "give the site's public root URL" in capsys.readouterr().out
