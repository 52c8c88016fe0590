"""Tiny, fully local GRPOTrainer runs (trl 1.16.0, CPU) that record what each logged metric is computed from.

Nothing here touches the Hugging Face Hub: the tokenizer is a WordLevel vocabulary built in memory, the policy is a
randomly initialised two-layer Llama saved to a temporary folder and reloaded (with ``beta != 0`` TRL builds the
reference model with ``from_pretrained(model.config._name_or_path)``), and ``HF_HUB_OFFLINE=1``.

What is recorded, per run:

* one :class:`GenBatch` per generation batch (``_generate_and_score_completions``): prompt / completion ids as TRL's
  ``_generate`` returned them, ``rewards_per_func`` [N, F] exactly as ``_calculate_rewards`` returned it (NaN where a
  reward function returned None), the reward weights, advantages, ``num_items_in_batch``, the values reward functions
  passed to ``log_metric`` and the ``num_input_tokens_seen`` counter;
* one :class:`MicroBatch` per call of ``_compute_loss``: the inputs TRL's loss saw and the log-probabilities /
  entropies TRL's own ``_get_per_token_logps_and_entropies`` returned inside that call (the bit-exact path), the
  unscaled logits of a plain forward with the same parameters (TRL's fused LM head never materialises them), the
  loss it returned and the entropy-controller state around it;
* one :class:`OptStep` per optimizer step: the gradients right before ``optimizer.step()`` (after HF's clipping, which
  the large ``max_grad_norm`` makes a no-op), the learning rate the scheduler reported, and the epoch bookkeeping.

Each record carries ``log_step = state.global_step + 1`` at capture time: the optimizer step it belongs to. A log
entry with ``step == s`` averages the records of the optimizer steps after the previous entry up to ``s``
(``Run.window``); with ``logging_steps=1`` that is exactly ``log_step == s``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import random
import tempfile
import warnings
from dataclasses import dataclass, field
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

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
PROMPTS = ["a b c", "d e", "f g h a", "b", "c d e f", "g h", "e a", "h g f e d"]

# Names of the reward functions (TRL names a plain function after its __name__).
CUSTOM_METRIC = "share_with_c"  # the key the third reward function logs through `log_metric`


# --------------------------------------------------------------------------------------------------------------------
# Reward functions. Deterministic functions of the completion text, so that the rewards vary inside a group.
# --------------------------------------------------------------------------------------------------------------------


def make_reward_funcs(none_steps: frozenset[int] = frozenset(), unscorable_first: str | None = None) -> list:
    """The three reward functions of a run. TRL names each after its ``__name__``.

    none_steps: optimizer steps (``trainer_state.global_step`` at generation) at which ``short_bonus`` returns None
    for every completion (an all-NaN column: the window mean drops it, or logs None if nothing is left);
    unscorable_first: completions starting with this word get None from every function (an unscorable row).
    """

    def unscorable(text):
        words = text.split()
        return unscorable_first is not None and bool(words) and words[0] == unscorable_first

    def count_a(completions, **kwargs):
        """Number of 'a' tokens, a small integer reward."""
        return [None if unscorable(c) else float(c.split().count("a")) for c in completions]

    def short_bonus(completions, completion_ids, trainer_state, **kwargs):
        """1 / length, but None when the completion starts with 'b' or 'h' (or at the steps in none_steps)."""
        out = []
        for text, ids in zip(completions, completion_ids, strict=True):
            words = text.split()
            if trainer_state.global_step in none_steps or unscorable(text) or (words and words[0] in ("b", "h")):
                out.append(None)
            else:
                out.append(1.0 / len(ids))
        return out

    def has_c(completions, log_metric, **kwargs):
        """1 if the completion contains 'c'; logs the share of such completions as a custom metric."""
        rewards = [None if unscorable(c) else (1.0 if "c" in c.split() else 0.0) for c in completions]
        scored = [r for r in rewards if r is not None]
        log_metric(CUSTOM_METRIC, sum(scored) / max(len(scored), 1))
        return rewards

    return [count_a, short_bonus, has_c]


REWARD_WEIGHTS = [1.0, 0.5, -2.0]


# --------------------------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------------------------


@dataclass
class GenBatch:
    log_step: int
    prompt_ids: list[list[int]]
    completion_ids: list[list[int]]
    rewards_per_func: torch.Tensor  # [N, F], NaN for None
    reward_weights: torch.Tensor  # [F]
    reward_func_names: list[str]
    num_generations: int
    advantages: torch.Tensor  # [N]
    num_items_in_batch: torch.Tensor
    completion_mask: torch.Tensor  # [N, T]
    logged_metrics: dict[str, list[float]]  # values passed to log_metric, by name
    num_input_tokens_seen_before: int  # state.num_input_tokens_seen before this batch
    num_input_tokens_seen: int  # the counter after this batch
    eos_token_ids: list[int]
    pad_token_id: int

    @property
    def completion_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.completion_ids])

    @property
    def prompt_lengths(self) -> torch.Tensor:
        return torch.tensor([len(ids) for ids in self.prompt_ids])

    @property
    def length_mask(self) -> torch.Tensor:
        """[N, T] completion mask rebuilt from the completion lengths (1 up to and including EOS, 0 on padding)."""
        lengths = self.completion_lengths
        width = int(lengths.max())
        return (torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)).long()

    @property
    def padded_completion_ids(self) -> torch.Tensor:
        """[N, T] completion ids, right-padded with the pad id."""
        width = max(len(ids) for ids in self.completion_ids)
        return torch.tensor([ids + [self.pad_token_id] * (width - len(ids)) for ids in self.completion_ids])

    @property
    def is_truncated(self) -> torch.Tensor:
        stop = set(self.eos_token_ids) | {self.pad_token_id}
        return torch.tensor([ids[-1] not in stop for ids in self.completion_ids])


@dataclass
class MicroBatch:
    log_step: int
    prompt_ids: torch.Tensor
    prompt_mask: torch.Tensor
    completion_ids: torch.Tensor
    completion_mask: torch.Tensor
    advantages: torch.Tensor  # [B]
    per_token_logps: torch.Tensor  # [B, T], TRL's own values from this forward
    entropies: torch.Tensor  # [B, T]
    logits: torch.Tensor  # [B, T, V] unscaled logits predicting each completion token (a plain forward, same params)
    old_per_token_logps_input: torch.Tensor | None  # what TRL received (None when on-policy)
    ref_per_token_logps: torch.Tensor | None
    num_items_in_batch: torch.Tensor
    loss: torch.Tensor  # what _compute_loss returned (already scaled for accumulation)
    gradient_accumulation_steps: int
    steps_per_generation: int
    num_processes: int
    entropy_coef_before: float
    entropy_coef_after: float
    last_world_entropy_before: float
    sync_gradients: bool

    @property
    def old_per_token_logps(self) -> torch.Tensor:
        """TRL's substitution: per_token_logps.detach() when no old log-probs were passed."""
        if self.old_per_token_logps_input is None:
            return self.per_token_logps
        return self.old_per_token_logps_input

    @property
    def mask(self) -> torch.Tensor:
        return self.completion_mask


@dataclass
class OptStep:
    log_step: int
    grads: list[torch.Tensor]  # every parameter gradient right before optimizer.step()
    learning_rate: float  # the scheduler's current value (what HF logs)
    optimizer_step_index: int  # global_step before the step (0-based)
    micro_steps_done: int  # micro-batches processed so far (GRPOTrainer._step)
    steps_in_epoch: int  # len(train_dataloader) as HF counts it


@dataclass
class Run:
    name: str
    args: Any
    log_history: list[dict[str, Any]]
    gen_batches: list[GenBatch] = field(default_factory=list)
    micro_batches: list[MicroBatch] = field(default_factory=list)
    opt_steps: list[OptStep] = field(default_factory=list)
    reward_func_names: list[str] = field(default_factory=list)
    custom_metric_names: list[str] = field(default_factory=list)
    num_prompts: int = 0  # rows of the training dataset
    seconds: float = 0.0

    def entries(self) -> list[dict[str, Any]]:
        """The per-step training log entries (the final runtime summary left out)."""
        return [e for e in self.log_history if "step" in e and "train_runtime" not in e]

    def window(self, step: int) -> range:
        """The optimizer steps (1-based, as ``log_step``) whose values the log entry ``step`` averages."""
        earlier = [e["step"] for e in self.entries() if e["step"] < step]
        return range((max(earlier) if earlier else 0) + 1, step + 1)

    def gen_for(self, step: int) -> list[GenBatch]:
        return [g for g in self.gen_batches if g.log_step in self.window(step)]

    def micro_for(self, step: int) -> list[MicroBatch]:
        return [m for m in self.micro_batches if m.log_step in self.window(step)]

    def opt_for(self, step: int) -> list[OptStep]:
        return [o for o in self.opt_steps if o.log_step in self.window(step)]


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

RUN_CONFIGS: dict[str, dict[str, Any]] = {
    # default loss (dapo) with every generic metric
    "main": {},
    # CISPO: `cispo_clip_ratio` (ε_high is an absolute cap on the ratio there)
    # (and one scale for the whole batch: frac_reward_zero_std can only be 0 or 1)
    "cispo": dict(loss_type="cispo", epsilon_high=1.02, max_steps=4, scale_rewards="batch"),
    # VESPO: `vespo/phi_seq_mean` (and the other aggregation of several reward functions)
    "vespo": dict(loss_type="vespo", max_steps=4, multi_objective_aggregation="normalize_then_sum"),
    # entropy bonus with the adaptive controller (target near ln|V| so the coefficient moves up and down):
    # `policy_loss`, `entropy_coef`; loss_type "grpo" exercises the per-sequence normalisation.
    "entropy": dict(
        loss_type="grpo",
        entropy_coef=0.02,
        use_adaptive_entropy=True,
        entropy_target=2.3,
        entropy_coef_delta=0.01,
        max_steps=6,
    ),
    # a static entropy bonus with the default loss (dapo): `policy_loss`, a constant `entropy_coef`
    "entropy_dapo": dict(entropy_coef=0.01, max_steps=4),
    # logging windows of two optimizer steps, a generation every optimizer step, on-policy (TRL passes no old
    # log-probs, the ratio is exactly 1): window means over several generation batches, NaN dropped, None logged
    # when nothing is left (see RUN_REWARDS), and loss / grad_norm / learning_rate over a two-step window;
    # a sampling temperature != 1 (log-probs and entropies are taken on the scaled logits).
    "window": dict(
        logging_steps=2, steps_per_generation=2, num_iterations=1, max_steps=6, learning_rate=0.05, temperature=0.8
    ),
}

# Per-run reward function settings (see make_reward_funcs).
RUN_REWARDS: dict[str, dict[str, Any]] = {
    "window": dict(none_steps=frozenset({2, 3, 4}), unscorable_first="h"),
}


def _install_probes(trainer, run: Run) -> None:
    """Wrap the trainer's methods on the instance so that every input of the logged metrics is recorded."""
    from transformers import TrainerCallback

    state = {"gen": None, "capture_logps": False, "logps": None}

    # --- generation side --------------------------------------------------------------------------------------------
    orig_generate = trainer._generate

    def _generate(prompts):
        out = orig_generate(prompts)
        state["gen"] = {"prompt_ids": [list(p) for p in out[0]], "completion_ids": [list(c) for c in out[1]]}
        return out

    orig_rewards = trainer._calculate_rewards

    def _calculate_rewards(inputs, prompts, completions, completion_ids_list):
        rewards_per_func = orig_rewards(inputs, prompts, completions, completion_ids_list)
        state["gen"]["rewards_per_func"] = rewards_per_func.detach().clone()
        return rewards_per_func

    orig_log_metric = trainer._log_metric

    def _log_metric(name, value):
        state["gen"].setdefault("logged", {}).setdefault(name, []).append(float(value))
        return orig_log_metric(name, value)

    orig_gas = trainer._generate_and_score_completions

    def _generate_and_score_completions(inputs):
        log_step = trainer.state.global_step + 1
        seen_before = int(trainer.state.num_input_tokens_seen)
        out = orig_gas(inputs)
        g = state["gen"]
        run.gen_batches.append(
            GenBatch(
                log_step=log_step,
                prompt_ids=g["prompt_ids"],
                completion_ids=g["completion_ids"],
                rewards_per_func=g["rewards_per_func"],
                reward_weights=trainer.reward_weights.detach().clone().float(),
                reward_func_names=list(trainer.reward_func_names),
                num_generations=trainer.num_generations,
                advantages=out["advantages"].detach().clone(),
                num_items_in_batch=out["num_items_in_batch"].detach().clone(),
                completion_mask=out["completion_mask"].detach().clone(),
                logged_metrics=g.get("logged", {}),
                num_input_tokens_seen_before=seen_before,
                num_input_tokens_seen=int(trainer.state.num_input_tokens_seen),
                eos_token_ids=list(trainer.eos_token_ids),
                pad_token_id=trainer._tokenizer.pad_token_id,
            )
        )
        state["gen"] = None
        return out

    # --- loss side --------------------------------------------------------------------------------------------------
    orig_logps = trainer._get_per_token_logps_and_entropies

    def _get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep, *args, **kwargs):
        out = orig_logps(model, input_ids, attention_mask, logits_to_keep, *args, **kwargs)
        if state["capture_logps"] and kwargs.get("compute_entropy"):
            state["logps"] = (out[0].detach().clone(), out[1].detach().clone())
        return out

    orig_compute_loss = trainer._compute_loss

    def _compute_loss(model, inputs):
        log_step = trainer.state.global_step + 1
        coef_before = float(trainer.entropy_coef)
        last_world_before = float(trainer._last_world_entropy)
        sync = bool(trainer.accelerator.sync_gradients)
        # A plain forward with the parameters the loss sees (before this step's update): the unscaled logits that
        # predict each completion token. TRL's own path uses a fused LM head and never materialises them.
        with torch.no_grad():
            input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
            attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
            width = inputs["completion_ids"].size(1)
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -width - 1 : -1, :]
        state["capture_logps"], state["logps"] = True, None
        try:
            loss = orig_compute_loss(model, inputs)
        finally:
            state["capture_logps"] = False
        logps, ents = state["logps"]

        def grab(name):
            value = inputs.get(name)
            return None if value is None else value.detach().clone()

        run.micro_batches.append(
            MicroBatch(
                log_step=log_step,
                prompt_ids=grab("prompt_ids"),
                prompt_mask=grab("prompt_mask"),
                completion_ids=grab("completion_ids"),
                completion_mask=grab("completion_mask"),
                advantages=grab("advantages"),
                per_token_logps=logps,
                entropies=ents,
                logits=logits.detach().clone(),
                old_per_token_logps_input=grab("old_per_token_logps"),
                ref_per_token_logps=grab("ref_per_token_logps"),
                num_items_in_batch=grab("num_items_in_batch"),
                loss=loss.detach().clone(),
                gradient_accumulation_steps=int(trainer.current_gradient_accumulation_steps),
                steps_per_generation=int(trainer.args.steps_per_generation),
                num_processes=int(trainer.accelerator.num_processes),
                entropy_coef_before=coef_before,
                entropy_coef_after=float(trainer.entropy_coef),
                last_world_entropy_before=last_world_before,
                sync_gradients=sync,
            )
        )
        return loss

    trainer._generate = _generate
    trainer._calculate_rewards = _calculate_rewards
    trainer._log_metric = _log_metric
    trainer._generate_and_score_completions = _generate_and_score_completions
    trainer._get_per_token_logps_and_entropies = _get_per_token_logps_and_entropies
    trainer._compute_loss = _compute_loss

    # --- optimizer side ---------------------------------------------------------------------------------------------
    class Probe(TrainerCallback):
        def __init__(self):
            self.pending: dict[str, Any] = {}
            self.steps_in_epoch = 0

        def on_train_begin(self, args, st, control, train_dataloader=None, **kw):
            self.steps_in_epoch = len(train_dataloader)

        def on_pre_optimizer_step(self, args, st, control, model=None, **kw):
            self.pending = {"grads": [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]}

        def on_optimizer_step(self, args, st, control, lr_scheduler=None, **kw):
            # HF logs `_get_learning_rate()` read right after optimizer.step(), before lr_scheduler.step()
            self.pending["lr"] = float(lr_scheduler.get_last_lr()[0])

        def on_step_end(self, args, st, control, **kw):
            run.opt_steps.append(
                OptStep(
                    log_step=st.global_step,
                    grads=self.pending["grads"],
                    learning_rate=self.pending["lr"],
                    optimizer_step_index=st.global_step - 1,
                    micro_steps_done=trainer._step,
                    steps_in_epoch=self.steps_in_epoch,
                )
            )

    trainer.add_callback(Probe())


def run_grpo(name: str, workdir: str | None = None) -> Run:
    """Run GRPOTrainer with the named configuration and return everything it recorded."""
    import time

    from datasets import Dataset
    from transformers import set_seed
    from trl import GRPOConfig, GRPOTrainer

    start = time.perf_counter()
    overrides = RUN_CONFIGS[name]
    if workdir is None:
        workdir = tempfile.mkdtemp(prefix=f"atlas-grpo-{name}-")
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    args = GRPOConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **overrides})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    reward_funcs = make_reward_funcs(**RUN_REWARDS.get(name, {}))
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=reward_funcs, args=args, train_dataset=dataset
    )
    run = Run(name=name, args=args, log_history=[], num_prompts=len(dataset))
    _install_probes(trainer, run)
    with contextlib.redirect_stdout(io.StringIO()):
        trainer.train()
    run.log_history = list(trainer.state.log_history)
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


def run_all(names: list[str] | None = None) -> dict[str, Run]:
    """Every run of RUN_CONFIGS (or the named ones), in this process, in a temporary folder removed afterwards."""
    # One intra-op thread: the model is tiny, and extra threads only spin when the cores are shared (pytest-xdist).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with quiet(), tempfile.TemporaryDirectory(prefix="atlas-grpo-") as tmp:
            return {name: run_grpo(name, os.path.join(tmp, name)) for name in (names or list(RUN_CONFIGS))}
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":  # a quick look: python -m tests.conformance.trl_runs
    import time

    t0 = time.perf_counter()
    runs = run_all()
    for r in runs.values():
        print(
            f"== {r.name}: {len(r.entries())} entries, {len(r.gen_batches)} gen, {len(r.micro_batches)} micro, "
            f"{len(r.opt_steps)} opt, {r.seconds:.1f}s"
        )
        for e in r.entries():
            print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in e.items()})
    print(f"total {time.perf_counter() - t0:.1f}s")
