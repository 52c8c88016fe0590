"""Every metric's reference snippet reproduces its documented worked example, on CPU and on CUDA."""

from __future__ import annotations

import pytest
import torch

from generator.load import load_metrics
from generator.snippets import as_floats, compile_function, materialize, mismatch, snippets_of

from .conftest import ROOT

ITEMS, _, _ = load_metrics(ROOT)
# the page's snippet and each version variant's own snippet, with where they live in the file
CASES = [(it, loc, snip) for it in ITEMS for loc, snip in snippets_of(it.model)]
CASE_IDS = [
    it.model.id + ("" if loc == ("snippet",) else "@" + str(it.model.variants[loc[1]].from_)) for it, loc, _ in CASES
]
DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
]


@pytest.fixture(autouse=True)
def _no_tf32():
    # TF32 matmuls on Ampere+ would change the last digits of GPU results
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def test_every_metric_has_a_snippet_test():
    assert len(ITEMS) == len(list((ROOT / "metrics").rglob("*.yaml"))), (
        "a metric file failed to load: run `atlas check`"
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("item", "loc", "snippet"), CASES, ids=CASE_IDS)
def test_snippet_reproduces_worked_example(item, loc, snippet, device):
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


def test_every_snippet_passes_ruff_as_extracted_code(tmp_path):
    """The snippets are code readers copy: they follow the project's lint rules (pyproject.toml) like the package."""
    import subprocess
    import sys

    files = {}
    for item, loc, snip in CASES:
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
