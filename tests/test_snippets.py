"""Every reference snippet (each page's and each variant's) reproduces its worked example on CPU and on CUDA, and
passes the project's lint rules as the code readers copy."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from generator.check.snippets import as_floats, compile_function, materialize, mismatch
from generator.render.metric_page import example_call
from generator.resolve.variants import each

from .conftest import ROOT, real_sources

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
]


def snippets() -> list[tuple]:
    """(file, location, snippet) of every snippet in the sources: metrics (their variants too) and explainers."""
    src = real_sources()
    return [(it, loc, snip) for it in src.metrics + src.explainers for loc, snip, _ in each(it.model, "snippet")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "snippet_case" in metafunc.fixturenames:
        cases = snippets()
        ids = [f"{getattr(it.model, 'trainer', '')}/{it.model.id}" if "/explainers/" in it.path else
               f"{it.model.id}" + ("" if var is None else f"@{it.model.variants[var].from_}")
               for it, loc, _ in cases for var in [loc[1] if loc[0] == "variants" else None]]
        metafunc.parametrize("snippet_case", cases, ids=ids)


@pytest.fixture(autouse=True)
def _no_tf32():
    # TF32 matmuls on Ampere+ would change the last digits of GPU results
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def test_every_metric_file_loaded():
    src = real_sources()
    assert not src.errors, "\n".join(map(str, src.errors))
    assert len(src.metrics) + len(src.trainers) + len(src.explainers) == len(list((ROOT / "metrics").rglob("*.yaml")))


@pytest.mark.parametrize("device", DEVICES)
def test_snippet_reproduces_worked_example(snippet_case, device):
    item, loc, snippet = snippet_case
    field = ".".join(map(str, loc))
    fn = compile_function(snippet.code, snippet.function, f"{item.path}#{field}")
    try:
        got = as_floats(fn(**materialize(snippet.example, device)))
    except Exception as exc:  # noqa: BLE001 - report where the snippet lives
        pytest.fail(f"{item.path}:{item.line(*loc, 'code')}: {field}.code: raised {type(exc).__name__}: {exc}")
    problem = mismatch(got, snippet.example.expected, snippet.example.atol)
    if problem:
        pytest.fail(
            f"{item.path}:{item.line(*loc, 'example', 'expected')}: {field}.example.expected: {problem} on {device}"
        )


def test_the_worked_example_as_the_page_prints_it_runs(snippet_case):
    """The call a page prints under its snippet is Python a reader can paste after the function: it runs on CPU and
    gives the expected result (booleans as True/False, floats where the example's tensor is floating-point)."""
    item, loc, snippet = snippet_case
    call, _ = example_call(snippet)
    head, _, expr = call.rpartition(f"{snippet.function}(")
    namespace: dict = {}
    exec(compile(snippet.code, f"{item.path}#snippet", "exec"), namespace)  # noqa: S102 - our own sources
    exec(head, namespace)  # noqa: S102 - e.g. nan = float('nan')
    got = as_floats(eval(f"{snippet.function}({expr}", namespace))  # noqa: S307
    problem = mismatch(got, snippet.example.expected, snippet.example.atol)
    assert not problem, f"{item.path}:{item.line(*loc, 'example')}: the printed example call: {problem}\n{call}"


def test_every_snippet_passes_ruff_as_extracted_code(tmp_path):
    """The snippets are code readers copy: they follow the project's lint rules (pyproject.toml) like the package."""
    files = {}
    for item, loc, snip in snippets():
        name = f"{len(files):03d}.py"
        (tmp_path / name).write_text(snip.code if snip.code.endswith("\n") else snip.code + "\n", encoding="utf-8")
        files[name] = (item, loc)
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"),
                           "--output-format", "concise", "--no-cache", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    problems = []
    for line in proc.stdout.splitlines():
        name, _, rest = line.partition(":")
        key = name.rsplit("/", 1)[-1]
        if key in files:
            item, loc = files[key]
            row, _, finding = rest.partition(":")
            code_line = item.line(*loc, "code") + int(row)
            field = ".".join(map(str, loc))
            problems.append(f"{item.path}:{code_line}: {field}.code: {finding.split(':', 1)[-1].strip()}")
    assert proc.returncode == 0 and not problems, "\n".join(problems) or proc.stdout + proc.stderr
