"""Legacy PPO's recorded runs: tiny, fully local ``PPOTrainer.step()`` loops on CPU. A GPT-2 with two layers and a
value head (built in memory, nothing from a hub) answers the prompts of ``tiny.PROMPTS`` by sampling; a
deterministic function of each response is its score; the loop calls ``step()`` then ``log_stats()`` like the TRL
examples do. The probes (``probes.py``) record every input of the 43 keys, and the dicts the accelerator would have
sent to the trackers become the run's ``log_history``, one entry per ``step()`` call.
"""

from __future__ import annotations

import time
from typing import Any

from packaging.version import Version

from ...driver import Run
from ...tiny import PROMPTS, make_tokenizer, plain
from .probes import install_probes

STEPS = 4
WORDS_SCORED = ("a", "b")  # each of these in a response adds 1 to its score

# Settings shared by every run: 4 sequences per step in mini-batches of 2 over 2 PPO epochs (4 updates per step),
# a learning rate high enough that the ratio leaves [0.8, 1.2] and both clips bind, and a short controller horizon
# so that `objective/kl_coef` visibly moves.
BASE_CONFIG: dict[str, Any] = dict(
    batch_size=4,
    mini_batch_size=2,
    ppo_epochs=2,
    learning_rate=0.05,
    horizon=40.0,
    target=0.5,
    log_with=None,
    seed=0,
)

# name -> (first TRL release the run is recorded for, overrides of BASE_CONFIG, how the run is driven)
RUN_CONFIGS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    # defaults otherwise: k1 estimator, adaptive coefficient; an exponential learning-rate schedule
    "main": ("0.7.10", {}, dict(lr_gamma=0.5)),
    # exact KL over the vocabulary, fixed coefficient, clipped scores (step() sees other scores than log_stats())
    "full": ("0.7.10", dict(kl_penalty="full", adap_kl_ctrl=False, score_clip=1.0), dict(score_scale=3.0)),
    # k2 estimator, whitened rewards, a ratio threshold that skips mini-batches, left padding (the mask is offset by
    # the padding). Not `use_score_scaling`: from 0.10.1 on, step() raises AttributeError with it.
    "mse": ("0.7.10", dict(kl_penalty="mse", whiten_rewards=True, ratio_threshold=1.05), dict(padding_side="left")),
    # |log-ratio|, three epochs cut short by early stopping, gradient accumulation over the two mini-batches
    "abs": (
        "0.7.10",
        dict(kl_penalty="abs", ppo_epochs=3, early_stopping=True, target_kl=0.001, gradient_accumulation_steps=2),
        {},
    ),
}


def runs_for(trl_version: str) -> list[str]:
    """The runs recorded for this TRL release."""
    return [name for name, (since, _, _) in RUN_CONFIGS.items() if Version(since) <= Version(trl_version)]


def make_policy(tok, seed: int):
    """A randomly initialised two-layer GPT-2 for ``tok`` with TRL's value head, built in memory."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    from trl import AutoModelForCausalLMWithValueHead

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tok),
        n_embd=16,
        n_layer=2,
        n_head=2,
        n_positions=64,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.bos_token_id,
    )
    return AutoModelForCausalLMWithValueHead.from_pretrained(GPT2LMHeadModel(config))


def score(tok, response) -> float:
    words = tok.convert_ids_to_tokens(response.tolist())
    return float(sum(w in WORDS_SCORED for w in words)) - 0.3 * len(words)


def run(name: str, workdir: str) -> Run:
    """Run ``PPOTrainer.step()`` with the named configuration and return everything it recorded."""
    import torch
    import transformers
    import trl
    from trl import PPOConfig, PPOTrainer, create_reference_model
    from trl.core import LengthSampler

    start = time.perf_counter()
    _, overrides, drive = RUN_CONFIGS[name]
    tok = make_tokenizer()
    tok.padding_side = drive.get("padding_side", "right")
    model = make_policy(tok, seed=0)
    ref_model = create_reference_model(model)
    config = PPOConfig(**{**BASE_CONFIG, **overrides})
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=config.learning_rate)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, drive["lr_gamma"]) if "lr_gamma" in drive else None
    trainer = PPOTrainer(config=config, model=model, ref_model=ref_model, tokenizer=tok, optimizer=optimizer,
                         lr_scheduler=scheduler)
    out = Run(
        name=name,
        trl_version=trl.__version__,
        transformers_version=transformers.__version__,
        args={k: plain(v) for k, v in config.to_dict().items()},
        log_history=[],
        facts={"num_processes": trainer.accelerator.num_processes, "padding_side": tok.padding_side,
               "lr_gamma": drive.get("lr_gamma", 1.0)},
    )
    generation_kwargs = dict(min_length=-1, top_k=0.0, top_p=1.0, do_sample=True, pad_token_id=tok.pad_token_id,
                             eos_token_id=tok.eos_token_id)
    lengths = LengthSampler(2, 8)
    with install_probes(trainer, out):
        for step in range(STEPS):
            prompts = [PROMPTS[(4 * step + i) % len(PROMPTS)] for i in range(config.batch_size)]
            queries = [torch.tensor(tok(p)["input_ids"]) for p in prompts]
            responses = trainer.generate(queries, return_prompt=False, batch_size=1, length_sampler=lengths,
                                         **generation_kwargs)
            scores = [torch.tensor(drive.get("score_scale", 1.0) * score(tok, r)) for r in responses]
            stats = trainer.step(queries, responses, scores)
            batch = {"query": prompts, "response": [tok.decode(r) for r in responses]}
            trainer.log_stats(stats, batch, scores)
    out.seconds = time.perf_counter() - start
    return out
