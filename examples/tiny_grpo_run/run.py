"""Train a tiny GRPO model on the CPU with the pinned TRL (a model and tokenizer built here, nothing from a hub),
then print every key it logged: its last value, what it means in your language, and the page that explains it.

    .venv/bin/python examples/tiny_grpo_run/run.py [--lang zh] [--out /tmp/tiny-run]

The run writes its `trainer_state.json` (TRL's log history) and the scores its reward functions returned to --out;
`check_a_formula.py` beside this file reproduces a logged value from them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing from the hub: the model and tokenizer are made below

from datasets import Dataset  # noqa: E402
from transformers import set_seed  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import print_keys, tiny_model  # noqa: E402 - shared by the tiny example runs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="en")
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="tiny-grpo-"))
    args = parser.parse_args()
    out = Path(args.out)
    scores: list[dict] = []  # what the reward functions returned, per call (one call per generation batch)

    def count_a(completions, trainer_state, **kwargs):
        values = [float(c.split().count("a")) for c in completions]
        scores.append({"step": trainer_state.global_step + 1, "count_a": values})
        return values

    def short(completions, **kwargs):
        values = [1.0 / (1 + len(c.split())) for c in completions]
        scores[-1]["short"] = values
        return values

    set_seed(0)
    model, tok = tiny_model(str(out / "model"))
    config = GRPOConfig(output_dir=str(out / "trainer"), per_device_train_batch_size=4, num_generations=4,
                        gradient_accumulation_steps=1, max_completion_length=6, max_steps=6, learning_rate=0.02,
                        beta=0.1, logging_steps=1, reward_weights=[1.0, 0.2], use_cpu=True, report_to="none",
                        save_strategy="no", disable_tqdm=True, seed=0)
    prompts = Dataset.from_dict({"prompt": ["a b c", "d e", "f g h a", "b", "c d e f", "g h"]})
    trainer = GRPOTrainer(model=model, processing_class=tok, reward_funcs=[count_a, short], args=config,
                          train_dataset=prompts)
    trainer.train()
    trainer.state.save_to_json(str(out / "trainer_state.json"))
    (out / "scores.json").write_text(json.dumps({"weights": [1.0, 0.2], "batches": scores}), encoding="utf-8")

    print_keys(trainer.state.log_history, "grpo", args.lang, names=("count_a", "short"))
    print(f"\nlog history and reward scores written to {out}")


if __name__ == "__main__":
    main()
