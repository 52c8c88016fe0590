"""Train a tiny DPO model on the CPU with the pinned TRL (a model, a tokenizer and eight preference pairs built
here, nothing from a hub), then print every key it logged: its last value, what it means in your language, and the
page that explains it.

    .venv/bin/python examples/tiny_dpo_run/run.py [--lang vi] [--out /tmp/tiny-dpo]

Two things people ask about DPO curves show up in its eight steps: the implicit rewards of the first log are exactly
0 (before the first update the policy is the reference), and `rewards/accuracies` reaches 1.0 within a few steps
while the loss is still close to ln 2 = 0.693: every margin only has to be above 0, however small.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing from the hub: the model and tokenizer are made below

from datasets import Dataset  # noqa: E402
from transformers import set_seed  # noqa: E402
from trl import DPOConfig, DPOTrainer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tiny_model import print_keys, tiny_model  # noqa: E402 - shared by the tiny example runs

# an easy preference: the chosen completion always starts with "a", the rejected one never contains it
PAIRS = [("b c", " a b ", " c d "), ("d", " a ", " e f g "), ("e f", " a c d ", " h "), ("g", " a h ", " b "),
         ("h a", " a ", " d e "), ("c", " a b c ", " f "), ("f g", " a e ", " g h b "), ("b", " a d ", " c ")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="en")
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="tiny-dpo-"))
    args = parser.parse_args()
    out = Path(args.out)

    set_seed(0)
    model, tok = tiny_model(str(out / "model"))
    config = DPOConfig(output_dir=str(out / "trainer"), per_device_train_batch_size=4, gradient_accumulation_steps=1,
                       max_steps=8, learning_rate=0.02, beta=0.1, logging_steps=1, use_cpu=True, report_to="none",
                       save_strategy="no", disable_tqdm=True, seed=0)
    pairs = Dataset.from_dict({"prompt": [p for p, _, _ in PAIRS], "chosen": [c for _, c, _ in PAIRS],
                               "rejected": [r for _, _, r in PAIRS]})
    trainer = DPOTrainer(model=model, processing_class=tok, args=config, train_dataset=pairs)
    trainer.train()
    trainer.state.save_to_json(str(out / "trainer_state.json"))

    first = next(e for e in trainer.state.log_history if "rewards/chosen" in e)
    print(f"first log (step {first['step']}): rewards/chosen = {first['rewards/chosen']:.4g}, "
          f"rewards/rejected = {first['rewards/rejected']:.4g}\n")
    print_keys(trainer.state.log_history, "dpo", args.lang)
    print(f"\nlog history written to {out}")


if __name__ == "__main__":
    main()
