"""How the conformance tests prove a formula, in a few lines: take the `reward` page's reference snippet from the
sources, run it on its worked example, then on the scores the tiny run's reward functions returned at each step,
and compare with what TRL logged. Run `run.py` first.

    .venv/bin/python examples/tiny_grpo_run/check_a_formula.py [--out /tmp/tiny-run]
"""

import argparse
import json
from pathlib import Path

import torch

from generator.check.snippets import as_floats, compile_function, materialize
from generator.read.sources import read_sources

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="/tmp/tiny-run")
out = Path(parser.parse_args().out)

sources = read_sources(Path(__file__).resolve().parents[2])
metric = next(it.model for it in sources.metrics if it.model.id == "grpo/reward")
reward = compile_function(metric.snippet.code, metric.snippet.function, "grpo/reward")
example = metric.snippet.example
print(f"worked example: {as_floats(reward(**materialize(example)))} (the page says {example.expected})")

scores = json.loads((out / "scores.json").read_text())
logged = {e["step"]: e["reward"] for e in json.loads((out / "trainer_state.json").read_text())["log_history"]
          if "reward" in e}
for batch in scores["batches"]:  # logging_steps=1: one generation batch per logged step
    per_func = torch.tensor([batch["count_a"], batch["short"]]).T  # [completions, reward functions]
    mine = as_floats(reward([per_func], torch.tensor(scores["weights"])))
    print(f"step {batch['step']}: snippet {mine:.6f}, TRL logged {logged[batch['step']]:.6f}",
          "ok" if abs(mine - logged[batch["step"]]) < 1e-6 else "DIFFERS")
