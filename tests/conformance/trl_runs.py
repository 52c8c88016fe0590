"""Tiny, fully local GRPOTrainer runs on CPU that record what each logged metric is computed from.

Run it with the Python of the TRL release under test; it writes every run of that release into one file
(``records.save_runs``) that the tests read in the project's own virtualenv::

    .cache/atlas/venvs/trl-0.26.2/bin/python -m tests.conformance.trl_runs --trl-version 0.26.2 --out runs.pt
    python -m tests.conformance.trl_runs --trl-version 1.16.0        # no --out: print what was logged

One set of probes (``probes.py``) serves every documented release.

Nothing here touches the Hugging Face Hub: the tokenizer is a WordLevel vocabulary built in memory, the policy is a
randomly initialised two-layer Llama saved to a temporary folder and reloaded (with ``beta != 0`` TRL builds the
reference model with ``from_pretrained(model.config._name_or_path)``), and ``HF_HUB_OFFLINE=1``.

What is recorded, per run (see ``records.py``): one ``GenBatch`` per generation batch, one ``MicroBatch`` per call of
``_compute_loss`` (TRL's own log-probabilities and entropies from inside that call, plus the unscaled logits of a
plain forward with the same parameters, since TRL >= 1.15 never materialises them), one ``OptStep`` per optimizer
step (the gradients right before ``optimizer.step()``, the learning rate HF logs, the epoch bookkeeping).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import random
import sys
import tempfile
import time
import warnings
from typing import Any

# No Hub access: set before transformers / huggingface_hub are first imported (they read these at import time).
os.environ["HF_HOME"] = os.path.join(tempfile.gettempdir(), "atlas-conformance-hf-home")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("WANDB_DISABLED", "true")
os.environ.setdefault("DISABLE_MLFLOW_INTEGRATION", "TRUE")

import torch  # noqa: E402

from .probes import install_probes  # noqa: E402
from .records import Run, save_runs  # noqa: E402

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
PROMPTS = ["a b c", "d e", "f g h a", "b", "c d e f", "g h", "e a", "h g f e d"]

CUSTOM_METRIC = "share_with_c"  # the key the third reward function logs through `log_metric` (TRL >= 1.0)


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("+")[0].split(".")[:3])


# --------------------------------------------------------------------------------------------------------------------
# Reward functions. Deterministic functions of the completion text, so that the rewards vary inside a group and the
# groups of a batch have different spreads.
# --------------------------------------------------------------------------------------------------------------------


def make_reward_funcs(
    none_steps: frozenset[int] = frozenset(), unscorable_first: str | None = None, unscorable_prompt: str | None = None
) -> list:
    """The three reward functions of a run. TRL names each after its ``__name__``.

    none_steps: optimizer steps (``trainer_state.global_step`` at generation) at which ``short_bonus`` returns None
    for every completion (an all-NaN column);
    unscorable_first: completions starting with this word get None from every function (an unscorable row);
    unscorable_prompt: every completion of this prompt gets None from every function (an unscorable group).
    """

    def unscorable(prompt, text):
        words = text.split()
        return prompt == unscorable_prompt or (
            unscorable_first is not None and bool(words) and words[0] == unscorable_first
        )

    def scores(prompts, completions, score):
        return [None if unscorable(p, c) else score(c) for p, c in zip(prompts, completions, strict=True)]

    def count_a(prompts, completions, **kwargs):
        """Number of 'a' tokens, a small integer reward."""
        return scores(prompts, completions, lambda c: float(c.split().count("a")))

    def short_bonus(prompts, completions, completion_ids, trainer_state, **kwargs):
        """1 / length, but None when the completion starts with 'b' or 'h' (or at the steps in none_steps)."""
        out = []
        for prompt, text, ids in zip(prompts, completions, completion_ids, strict=True):
            starts_b_or_h = text.split()[:1] in (["b"], ["h"])
            if trainer_state.global_step in none_steps or unscorable(prompt, text) or starts_b_or_h:
                out.append(None)
            else:
                out.append(1.0 / len(ids))
        return out

    def has_c(prompts, completions, log_metric=None, **kwargs):
        """1 if the completion contains 'c'; logs the share of such completions where TRL offers `log_metric`."""
        rewards = scores(prompts, completions, lambda c: float("c" in c.split()))
        if log_metric is not None:
            scored = [r for r in rewards if r is not None]
            log_metric(CUSTOM_METRIC, sum(scored) / max(len(scored), 1))
        return rewards

    return [count_a, short_bonus, has_c]


REWARD_WEIGHTS = [1.0, 0.5, -2.0]


# --------------------------------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------------------------------

# The settings shared by every run. They make the loss-side metrics non-trivial:
# * beta > 0 -> `kl` is logged, and it is > 0 once the policy has moved;
# * num_iterations=2 and steps_per_generation=4 > gradient_accumulation_steps=2 -> TRL computes old log-probs and the
#   importance ratio moves away from 1 (a high learning rate and a small epsilon make clipping actually happen);
# * per_device_train_batch_size=2 with num_generations=4 -> each micro-batch holds 2 rows drawn (shuffled) from a
#   generation batch of 2 prompt groups, so a micro-batch mixes groups and both rows can be low-clipped;
# * large max_grad_norm -> HF's gradient clipping never changes the gradients, the logged grad_norm is their norm.
BASE_CONFIG: dict[str, Any] = dict(
    per_device_train_batch_size=2,
    gradient_accumulation_steps=2,
    steps_per_generation=4,
    num_generations=4,
    num_iterations=2,
    max_completion_length=6,
    max_steps=12,
    learning_rate=0.3,
    lr_scheduler_type="linear",
    warmup_steps=1,
    beta=0.1,
    epsilon=0.05,
    epsilon_high=0.08,
    max_grad_norm=1e9,
    reward_weights=REWARD_WEIGHTS,
    logging_steps=1,
    bf16=False,
    fp16=False,
    gradient_checkpointing=False,
    use_cpu=True,
    report_to="none",
    save_strategy="no",
    disable_tqdm=True,
    seed=0,
    data_seed=0,
    dataloader_num_workers=0,
)

# name -> (first TRL release the run is recorded for, overrides of BASE_CONFIG)
RUN_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    # default loss (dapo) with every generic metric
    "main": ("0.26.0", {}),
    # logging windows of two optimizer steps, a generation every optimizer step, on-policy (TRL passes no old
    # log-probs, the ratio is exactly 1): window means over several generation batches, with an all-None reward
    # column at some steps and unscorable rows (see RUN_REWARDS), so that window means meet NaN; loss / grad_norm /
    # learning_rate over a two-step window; a sampling temperature != 1 (log-probs and entropies use scaled logits).
    "window": (
        "0.26.0",
        dict(
            logging_steps=2, steps_per_generation=2, num_iterations=1, max_steps=6, learning_rate=0.05, temperature=0.8
        ),
    ),
    # per-sequence loss normalisation ("grpo") and one std for the whole batch (`scale_rewards="batch"`): the other
    # branch of reward_std / frac_reward_zero_std, clip metrics under another loss type
    "grpo_batch": ("0.26.0", dict(loss_type="grpo", scale_rewards="batch", max_steps=4)),
    # CISPO: `cispo_clip_ratio` (ε_high is an absolute cap on the ratio there); conformance-checked from 1.0 only
    "cispo": ("1.0.0", dict(loss_type="cispo", epsilon_high=1.02, max_steps=4, scale_rewards="batch")),
    # VESPO: `vespo/phi_seq_mean` (and the other aggregation of several reward functions)
    "vespo": ("1.0.0", dict(loss_type="vespo", max_steps=4, multi_objective_aggregation="normalize_then_sum")),
    # entropy bonus with the adaptive controller (target near ln|V| so the coefficient moves up and down):
    # `policy_loss`, `entropy_coef`; loss_type "grpo" exercises the per-sequence normalisation.
    "entropy": (
        "1.8.0",
        dict(
            loss_type="grpo",
            entropy_coef=0.02,
            use_adaptive_entropy=True,
            entropy_target=2.3,
            entropy_coef_delta=0.01,
            max_steps=6,
        ),
    ),
    # a static entropy bonus with the default loss (dapo): `policy_loss`, a constant `entropy_coef`
    "entropy_dapo": ("1.8.0", dict(entropy_coef=0.01, max_steps=4)),
}

# Per-run reward function settings (see make_reward_funcs).
RUN_REWARDS: dict[str, dict[str, Any]] = {
    # an all-None column at some steps, unscorable rows, and a whole unscorable group (prompt "b", drawn at step 4)
    "window": dict(none_steps=frozenset({2, 3, 4}), unscorable_first="h", unscorable_prompt="b"),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, _) in RUN_CONFIGS.items() if _release(since) <= _release(trl_version)]


# --------------------------------------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------------------------------------


def make_tokenizer():
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


def _plain(value: Any) -> Any:
    """A config value as a plain container (enums by value, anything exotic as its string)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(getattr(value, "value", value))


def run_grpo(name: str, workdir: str) -> Run:
    """Run GRPOTrainer with the named configuration and return everything it recorded."""
    import transformers
    import trl
    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    start = time.perf_counter()
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    args = GRPOConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **RUN_CONFIGS[name][1]})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    reward_funcs = make_reward_funcs(**RUN_REWARDS.get(name, {}))
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=reward_funcs, args=args, train_dataset=dataset
    )
    run = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: _plain(v) for k, v in args.to_dict().items()},
        log_history=[],
        num_prompts=len(dataset),
    )
    install_probes(trainer, run)
    with contextlib.redirect_stdout(io.StringIO()):
        trainer.train()
    run.log_history = [{k: _plain(v) for k, v in e.items()} for e in trainer.state.log_history]
    run.reward_func_names = list(trainer.reward_func_names)
    run.custom_metric_names = sorted({k for g in run.gen_batches for k in g.logged_metrics})
    run.seconds = time.perf_counter() - start
    return run


@contextlib.contextmanager
def quiet():
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


def run_all(names: list[str]) -> dict[str, Run]:
    """The named runs, in this process, in a temporary folder removed afterwards."""
    # One intra-op thread: the model is tiny, and extra threads only spin when the cores are shared (pytest-xdist).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with quiet(), tempfile.TemporaryDirectory(prefix="atlas-grpo-") as tmp:
            return {name: run_grpo(name, os.path.join(tmp, name)) for name in names}
    finally:
        torch.set_num_threads(threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trl-version", required=True, help="the TRL release this interpreter must have")
    parser.add_argument("--out", help="write the runs here (records.save_runs); without it, print the log")
    parser.add_argument("--runs", help="comma-separated run names (default: every run this release supports)")
    opts = parser.parse_args(argv)

    import trl

    if trl.__version__ != opts.trl_version:
        print(f"{sys.executable} has trl {trl.__version__}, not {opts.trl_version}", file=sys.stderr)
        return 2
    names = opts.runs.split(",") if opts.runs else runs_for(opts.trl_version)
    unknown = sorted(set(names) - set(runs_for(opts.trl_version)))
    if unknown:
        print(f"no run {unknown} for trl {opts.trl_version} (known: {runs_for(opts.trl_version)})", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    runs = run_all(names)
    if opts.out:
        save_runs(runs, opts.out)
    for r in runs.values():
        print(
            f"== {r.name}: {len(r.entries())} entries, {len(r.gen_batches)} gen, {len(r.micro_batches)} micro, "
            f"{len(r.opt_steps)} opt, {r.seconds:.1f}s"
        )
        if not opts.out:
            for e in r.entries():
                print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in e.items()})
    print(f"trl {trl.__version__}: {len(runs)} runs in {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
