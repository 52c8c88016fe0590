"""The package's shape: a module imports only from its own layer or the layers before it (`generator.LAYERS`),
there is no import cycle (imports inside functions included), and no Python spells a trainer's id or a language
code: those are data (metrics/<trainer>/trainer.yaml, atlas.yml)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import generator

from .conftest import ROOT, real_sources

PACKAGE = ROOT / "generator"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # `from ..read import x` inside generator.check: generator.read
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def layer(name: str) -> int:
    part = name.split(".")[1] if "." in name else ""
    return next((i for i, group in enumerate(generator.LAYERS) if part in group), -1)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_belongs_to_a_layer():
    assert [n for n in modules() if n != "generator" and layer(n) < 0] == []


def test_no_module_imports_a_layer_after_its_own():
    bad = [f"{src} (layer {layer(src)}) imports {dst} (layer {layer(dst)})"
           for src, targets in graph().items() if src != "generator" for dst in sorted(targets)
           if layer(dst) > layer(src)]
    assert not bad, "\n".join(bad)


def cycles(edges: dict[str, set[str]]) -> list[str]:
    """Every import cycle found by a depth-first walk, as ``a -> b -> a``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                found.append(" -> ".join((path + [node])[(path + [node]).index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    return found


def test_there_is_no_import_cycle():
    assert not (found := cycles(graph())), "\n".join(found)


def test_the_checks_see_a_hidden_import_and_a_cycle(tmp_path):
    """The checks read real imports: a module of `read` importing `render` inside a function is found, and so is
    a cycle."""
    path = tmp_path / "fake.py"
    path.write_text("def f():\n    from ..render import view\n", encoding="utf-8")
    found = imports("generator.read.fake", path, {**modules(), "generator.read.fake": path})
    assert found == {"generator.render.view"} and layer("generator.render.view") > layer("generator.read.fake")
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]


def _literals(path: Path) -> list[tuple[int, str]]:
    """String literals of a module's code: docstrings and field descriptions (documentation) left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            skip.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "description":
            skip |= {id(n) for n in ast.walk(node.value)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def test_no_python_names_a_trainer_or_a_language():
    src = real_sources()
    trainers = [t.model.id for t in src.trainers]
    codes = src.config.lang_codes
    assert trainers and codes
    word = re.compile(r"\b(" + "|".join(map(re.escape, trainers)) + r")\b", re.I)
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _literals(path):
            if word.search(text) or text in codes:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {text[:60]!r}")
    assert not bad, "trainer ids and language codes are data, not code:\n" + "\n".join(bad)
