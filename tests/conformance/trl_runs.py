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
  loss it returned and the entropy-controller state around it;
* one :class:`OptStep` per optimizer step: the gradients right before ``optimizer.step()`` (after HF's clipping, which
  the large ``max_grad_norm`` makes a no-op), the learning rate the scheduler reported, and the epoch bookkeeping.

Each record carries ``log_step``: the ``step`` of the ``log_history`` entry its metric values end up in. Everything is
captured while ``state.global_step == g``, and the entry written after that optimizer step has ``step == g + 1``
(``logging_steps=1``).
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

# Must be set before transformers / huggingface_hub are imported anywhere in the process.
_HF_HOME = tempfile.mkdtemp(prefix="atlas-conformance-hf-")
os.environ.setdefault("HF_HOME", _HF_HOME)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
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


def count_a(completions, **kwargs):
    """Number of 'a' tokens, a small integer reward."""
    return [float(c.split().count("a")) for c in completions]


def short_bonus(completions, completion_ids, **kwargs):
    """1 / length, but None (unscorable) when the completion starts with 'b' or 'h'."""
    out = []
    for text, ids in zip(completions, completion_ids, strict=True):
        words = text.split()
        if words and words[0] in ("b", "h"):
            out.append(None)
        else:
            out.append(1.0 / len(ids))
    return out


def has_c(completions, log_metric, **kwargs):
    """1 if the completion contains 'c'; logs the batch share of such completions as a custom metric."""
    rewards = [1.0 if "c" in c.split() else 0.0 for c in completions]
    log_metric(CUSTOM_METRIC, sum(rewards) / len(rewards))
    return rewards


REWARD_FUNCS = [count_a, short_bonus, has_c]
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
    micro_steps_done: int  # micro-batches processed so far, this one included
    steps_in_epoch: int  # len(train_dataloader) as HF counts it
    epoch_index: int


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
    seconds: float = 0.0

    def entries(self) -> list[dict[str, Any]]:
        """The per-step training log entries (the final runtime summary left out)."""
        return [e for e in self.log_history if "step" in e and "train_runtime" not in e]

    def gen_for(self, step: int) -> list[GenBatch]:
        return [g for g in self.gen_batches if g.log_step == step]

    def micro_for(self, step: int) -> list[MicroBatch]:
        return [m for m in self.micro_batches if m.log_step == step]

    def opt_for(self, step: int) -> list[OptStep]:
        return [o for o in self.opt_steps if o.log_step == step]


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
    "cispo": dict(loss_type="cispo", epsilon_high=1.02, max_steps=4),
    # VESPO: `vespo/phi_seq_mean`
    "vespo": dict(loss_type="vespo", max_steps=4),
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
                    epoch_index=int(st.epoch - 1e-9) if st.epoch else 0,
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
    workdir = workdir or tempfile.mkdtemp(prefix=f"atlas-grpo-{name}-")
    set_seed(0)
    random.seed(0)
    tok = make_tokenizer()
    model = make_model(tok, os.path.join(workdir, "model"), seed=0)
    args = GRPOConfig(output_dir=os.path.join(workdir, "out"), **{**BASE_CONFIG, **overrides})
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=list(REWARD_FUNCS), args=args, train_dataset=dataset
    )
    run = Run(name=name, args=args, log_history=[])
    _install_probes(trainer, run)
    with contextlib.redirect_stdout(io.StringIO()):
        trainer.train()
    run.log_history = list(trainer.state.log_history)
    run.reward_func_names = list(trainer.reward_func_names)
    run.custom_metric_names = sorted({k for g in run.gen_batches for k in g.logged_metrics})
    run.seconds = time.perf_counter() - start
    return run


def quiet() -> None:
    """Silence the chatty but harmless warnings of a tiny offline run."""
    warnings.filterwarnings("ignore")
    for name in ("transformers", "trl", "datasets", "accelerate", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with contextlib.suppress(Exception):
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()


def run_all(names: list[str] | None = None) -> dict[str, Run]:
    quiet()
    return {name: run_grpo(name) for name in (names or list(RUN_CONFIGS))}


if __name__ == "__main__":  # a quick look: python -m tests.conformance.trl_runs
    import time

    t0 = time.perf_counter()
    runs = run_all()
    for r in runs.values():
        print(f"== {r.name}: {len(r.entries())} entries, {len(r.gen_batches)} gen, {len(r.micro_batches)} micro, "
              f"{len(r.opt_steps)} opt, {r.seconds:.1f}s")
        for e in r.entries():
            print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in e.items()})
    print(f"total {time.perf_counter() - t0:.1f}s")
