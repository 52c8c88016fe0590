"""Every example of examples/ runs and says what its README promises (the add_a_metric example is built and checked
by tests/test_trainers_as_data.py; here its README's commands run on a copy of the sources)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import ROOT, copy_cache, copy_sources

EXAMPLES = ROOT / "examples"


def _python(script: Path, *args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("tiny-run")
    return out, _python(EXAMPLES / "tiny_grpo_run" / "run.py", "--lang", "zh", "--out", str(out))


def test_the_tiny_run_prints_every_logged_key_with_its_meaning_and_page(tiny_run):
    out, printed = tiny_run
    state = __import__("json").loads((out / "trainer_state.json").read_text(encoding="utf-8"))
    keys = {k for e in state["log_history"] if "train_runtime" not in e for k in e} - {"step"}
    assert {"reward", "kl", "entropy", "completions/mean_length", "rewards/count_a/mean"} <= keys
    for key in keys:
        assert re.search(rf"^{re.escape(key)} = ", printed, re.M), key
    assert "(not documented)" not in printed
    assert "奖励" in printed and "http://127.0.0.1:8000/1.16/zh/grpo/kl/" in printed


def test_check_a_formula_reproduces_every_logged_reward(tiny_run):
    out, _ = tiny_run
    printed = _python(EXAMPLES / "tiny_grpo_run" / "check_a_formula.py", "--out", str(out))
    assert "worked example: 0.75 (the page says 0.75)" in printed
    steps = re.findall(r"^step (\d+): snippet ([\d.]+), TRL logged ([\d.]+) (\w+)$", printed, re.M)
    assert len(steps) == 6 and all(ok == "ok" and mine == logged for _, mine, logged, ok in steps), printed


def test_the_translation_walkthrough_shows_stale_then_stamped():
    printed = _python(EXAMPLES / "translate_a_field" / "walkthrough.py")
    first, after_edit, after_stamp = re.split(r"^\$ atlas i18n status.*$", printed, flags=re.M)[1:4]
    assert re.search(r"^zh .* 0 +0$", first, re.M) and re.search(r"^vi .* 0 +0$", first, re.M)
    assert "metrics/grpo/kl.yaml:9: title: zh translation stale" in after_edit
    assert "metrics/grpo/kl.yaml:10: title: vi translation stale" in after_edit
    assert "zh translation stale" not in after_stamp and "kl.yaml:10: title: vi translation stale" in after_stamp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_add_a_metric_readme_commands_take_the_copy_to_a_page(tmp_path, site_cache):
    root = copy_sources(tmp_path / "src")
    shutil.copytree(EXAMPLES, root / "examples")
    copy_cache(root)
    readme = (EXAMPLES / "add_a_metric" / "README.md").read_text(encoding="utf-8")
    commands = [ln.split("#")[0].strip() for ln in re.search(r"```sh\n(.*?)```", readme, re.S).group(1).splitlines()]
    copy, check, serve = commands
    assert copy == "cp -r examples/add_a_metric/toy metrics/toy"
    subprocess.run(copy.split(), cwd=root, check=True)
    atlas = [sys.executable, "-m", "generator.cli", "--root", str(root)]
    assert check == ".venv/bin/atlas check"
    subprocess.run(atlas + ["check"], cwd=ROOT, check=True, capture_output=True, timeout=600)
    port = _free_port()
    args = serve.split()[1:] + ["--port", str(port)]
    proc = subprocess.Popen(atlas + args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/1.12/toy/coins/heads/") as resp:
                    assert "ToyTrainer" in resp.read().decode("utf-8")
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the preview never answered"
                time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_tiny_dpo_run_prints_every_logged_key_and_starts_at_zero(tmp_path):
    printed = _python(EXAMPLES / "tiny_dpo_run" / "run.py", "--lang", "vi", "--out", str(tmp_path))
    state = __import__("json").loads((tmp_path / "trainer_state.json").read_text(encoding="utf-8"))
    logs = [e for e in state["log_history"] if "rewards/chosen" in e]
    keys = {k for e in logs for k in e} - {"step"}
    assert {"rewards/chosen", "rewards/margins", "rewards/accuracies", "logps/rejected", "logits/chosen"} <= keys
    for key in keys:
        assert re.search(rf"^{re.escape(key)} = ", printed, re.M), key
    assert "(not documented)" not in printed
    # what the README promises: exact zeros first, accuracy 1.0 while the loss is still near ln 2
    assert logs[0]["rewards/chosen"] == 0 and logs[0]["rewards/rejected"] == 0
    assert "rewards/chosen = 0, rewards/rejected = 0" in printed
    assert any(e["rewards/accuracies"] == 1 and e["loss"] > 0.5 for e in logs)
    assert "http://127.0.0.1:8000/1.16/vi/dpo/rewards/accuracies/" in printed


def test_the_doctor_example_finds_the_planted_problem():
    done = subprocess.run([sys.executable, "-m", "generator.cli", "doctor",
                           str(EXAMPLES / "doctor" / "grpo-trl-1.16.0" / "trainer_state.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 1, done.stderr[-2000:]
    readme = (EXAMPLES / "doctor" / "README.md").read_text(encoding="utf-8")
    flagged = re.findall(r"^RED FLAG (\S+)", done.stdout, re.M)
    assert {"kl", "clip_ratio/low_mean", "clip_ratio/region_mean"} <= set(flagged), done.stdout
    assert all(f"`{key}`" in readme for key in flagged), flagged
    assert f"prints {['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'][len(flagged)]} red flags" in readme
    assert "GRPO (`GRPOTrainer`), TRL 1.16 line" in done.stdout and "RLOO (--trainer rloo)" in done.stdout
