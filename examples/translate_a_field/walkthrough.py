"""A translator's round, on a copy of the sources: the English of one field changes, the status reports its Chinese
and Vietnamese translations as stale (with their lines), the Chinese one is updated and stamped, and the status
changes again. Every command is printed before its output, as you would type it.

    .venv/bin/python examples/translate_a_field/walkthrough.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILE = "metrics/grpo/kl.yaml"


def atlas(root: Path, *args: str) -> None:
    print(f"$ atlas {' '.join(args)}")
    done = subprocess.run([sys.executable, "-m", "generator.cli", "--root", str(root), *args], capture_output=True,
                          text=True, cwd=ROOT)
    print((done.stdout + done.stderr).strip() + "\n")


def edit(root: Path, old: str, new: str, who: str) -> None:
    path = root / FILE
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    print(f"# {who} edits {FILE}: {old.strip()!r} -> {new.strip()!r}\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("atlas.yml", "mkdocs.yml"):
            shutil.copy2(ROOT / name, root / name)
        for folder in ("metrics", "glossary", "locales"):
            shutil.copytree(ROOT / folder, root / folder)
        atlas(root, "i18n", "status", "--lang", "zh", "--lang", "vi")
        edit(root, "  en: KL estimate between the policy and the reference model\n",
             "  en: KL estimate between the policy and the reference model, on sampled tokens\n", "An author")
        atlas(root, "i18n", "status", "--lang", "zh", "--lang", "vi", "--stale")
        edit(root, "  zh: 策略与参考模型之间的 KL 估计\n",
             "  zh: 策略与参考模型之间在采样词元上的 KL 估计\n", "The Chinese translator")
        atlas(root, "i18n", "stamp", "--lang", "zh")
        atlas(root, "i18n", "status", "--lang", "zh", "--lang", "vi", "--stale")


if __name__ == "__main__":
    main()
