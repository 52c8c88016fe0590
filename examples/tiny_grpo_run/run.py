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
import tempfile
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing from the hub: the model and tokenizer are made below

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, set_seed  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from generator.pipeline import load_atlas  # noqa: E402 - the atlas itself, to say what each key means
from generator.resolve.releases import line_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def tiny_model(folder: str) -> tuple[LlamaForCausalLM, PreTrainedTokenizerFast]:
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", *WORDS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    tok.padding_side = "left"
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         pad_token_id=0, eos_token_id=1, tie_word_embeddings=False)
    LlamaForCausalLM(config).save_pretrained(folder)  # GRPO loads its reference model from this folder (beta > 0)
    return LlamaForCausalLM.from_pretrained(folder), tok


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

    atlas = load_atlas(ROOT, run_snippets=False)
    import trl

    edition = atlas.edition(line_for(atlas.config, trl.__version__).name)
    lang = atlas.config.language(args.lang)
    by_key = {r.logged_as: r for r in edition.metrics} | {
        r.logged_as.replace("{name}", name): r for r in edition.metrics for name in ("count_a", "short")}
    last = {k: v for entry in trainer.state.log_history if "train_runtime" not in entry for k, v in entry.items()}
    print(f"trl {trl.__version__}: {len(last) - 1} keys logged; read them on the TRL {edition.line.name} pages\n")
    for key, value in sorted(last.items()):
        if key == "step":
            continue
        res = by_key.get(key)
        meaning = res.metric.summary.get(lang.code, "en") if res else "(not documented)"
        url = f"{atlas.config.site_url}{edition.line.name}/{lang.prefix}{res.metric.trainer}/{res.metric.slug}/" \
            if res else ""
        print(f"{key} = {value:.4g}\n    {meaning}\n    {url}")
    print(f"\nlog history and reward scores written to {out}")


if __name__ == "__main__":
    main()
