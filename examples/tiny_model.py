"""What the tiny example runs share: a two-layer Llama and a word-level tokenizer built in memory (nothing from the
Hugging Face hub), and the printout of every key a run logged with its meaning and page, read from the atlas."""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def tiny_model(folder: str) -> tuple[LlamaForCausalLM, PreTrainedTokenizerFast]:
    """The model (also saved to ``folder``, where trainers that load a reference model by name find it) and its
    tokenizer: eight words, padding and EOS."""
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", *WORDS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    tok.padding_side = "left"
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         pad_token_id=0, eos_token_id=1, tie_word_embeddings=False)
    LlamaForCausalLM(config).save_pretrained(folder)
    return LlamaForCausalLM.from_pretrained(folder), tok


def print_keys(log_history: list[dict], trainer: str, lang_code: str, names: tuple[str, ...] = ()) -> None:
    """Each key of the run's last log entries: value, one-line meaning in ``lang_code`` and the URL of its page on
    the line of the installed TRL. ``names`` fill templated keys (``rewards/{name}/mean``)."""
    import trl

    from generator.pipeline import load_atlas  # the atlas itself says what each key means
    from generator.render import paths
    from generator.resolve.releases import line_for

    atlas = load_atlas(ROOT, run_snippets=False)
    edition = atlas.edition(line_for(atlas.config, trl.__version__).name)
    lang = atlas.config.language(lang_code)
    mine = [r for r in edition.metrics if r.metric.trainer == trainer]
    by_key = {r.logged_as: r for r in mine} | {r.logged_as.replace("{name}", n): r for r in mine for n in names}
    last = {k: v for entry in log_history if "train_runtime" not in entry for k, v in entry.items()}
    last.pop("step", None)
    print(f"trl {trl.__version__}: {len(last)} keys logged; read them on the TRL {edition.line.name} pages\n")
    for key, value in sorted(last.items()):
        res = by_key.get(key)
        meaning = res.metric.summary.get(lang.code, "en") if res else "(not documented)"
        url = paths.line_url(atlas.config, edition.line) + lang.prefix + paths.folder(paths.metric_doc(res.metric)) \
            if res else ""
        print(f"{key} = {value:.4g}\n    {meaning}\n    {url}")
