"""Building blocks of any trainer's recorded runs: a tiny word-level tokenizer and a tiny Llama built in memory, a
prompt set made of its words, and a context that silences the chatter of such runs.

Nothing here touches the Hugging Face Hub: ``offline()`` sets ``HF_HUB_OFFLINE=1`` (and its kin), and must run
before transformers or huggingface_hub are first imported, since they read these variables at import time
(``record.py`` calls it first thing). Runs with the interpreter of a TRL release: needs torch, tokenizers and
transformers, nothing of the project's own virtualenv.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
PROMPTS = ["a b c", "d e", "f g h a", "b", "c d e f", "g h", "e a", "h g f e d"]


def offline() -> None:
    """No Hub access, no experiment trackers: set before transformers / huggingface_hub are first imported."""
    os.environ["HF_HOME"] = os.path.join(tempfile.gettempdir(), "atlas-conformance-hf-home")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("WANDB_DISABLED", "true")
    os.environ.setdefault("DISABLE_MLFLOW_INTEGRATION", "TRUE")


def make_tokenizer():
    """A left-padding WordLevel tokenizer over ``WORDS`` with pad, EOS, BOS and UNK tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>"
    )
    tok.padding_side = "left"
    # TRL < 0.29 passes the tokenizer's whole output to generate(), and transformers 4.x rejects token_type_ids
    tok.model_input_names = ["input_ids", "attention_mask"]
    return tok


def make_model(tok, folder: str, seed: int):
    """A randomly initialised two-layer Llama for ``tok``, saved to ``folder`` and reloaded from there: a trainer
    that builds a reference model with ``from_pretrained(model.config._name_or_path)`` finds it on disk."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder)
    return AutoModelForCausalLM.from_pretrained(folder)


def plain(value: Any) -> Any:
    """A config or log value as a plain container (enums by value, anything exotic as its string), so that a run
    file loads with ``weights_only=True``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return str(getattr(value, "value", value))


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence the chatty but harmless warnings, logs and progress bars of a tiny offline run (restored after)."""
    from transformers.utils import logging as hf_logging

    names = ("transformers", "trl", "datasets", "accelerate", "huggingface_hub")
    levels = {name: logging.getLogger(name).level for name in names}
    verbosity = hf_logging.get_verbosity()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            logging.getLogger(name).setLevel(logging.ERROR)
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        try:
            yield
        finally:
            hf_logging.enable_progress_bar()
            hf_logging.set_verbosity(verbosity)
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """One intra-op thread: the model is tiny, and extra threads only spin when the cores are shared (xdist)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
