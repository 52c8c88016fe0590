"""``python -m tests.conformance.warm``, with a release's interpreter: import what its recordings will import, writing
the bytecode, once, as part of making the virtualenv (``envs.ensure_venv``).

The virtualenvs are installed ``--no-compile`` (compiling all of torch and transformers would be a third of the
install), and where ``PYTHONDONTWRITEBYTECODE`` is set every recording process would compile torch, transformers
and TRL again at import: about 14 s of CPU each. Importing them here, with bytecode written, compiles only what the
recordings use. A module missed here is compiled by the first recording that imports it (``envs`` lets the
release's processes write bytecode)."""

from __future__ import annotations

import sys

from . import tiny


def main() -> int:
    tiny.offline()
    if sys.flags.dont_write_bytecode:
        print("PYTHONDONTWRITEBYTECODE is set: nothing would be kept", file=sys.stderr)
        return 2
    import transformers
    import trl

    from .trainers import package, trainer_ids

    for name in ("AutoModelForCausalLM", "AutoModelForSequenceClassification", "LlamaForCausalLM",
                 "LlamaForSequenceClassification", "PreTrainedTokenizerFast", "Trainer", "TrainingArguments"):
        getattr(transformers, name)
    missing = []
    for name in sorted(n for n in dir(trl) if n.endswith(("Trainer", "Config"))):
        try:
            getattr(trl, name)  # TRL's lazy module imports the trainer's module and what it uses
        except Exception as exc:  # noqa: BLE001 - an optional dependency this virtualenv lacks: nothing to warm
            missing.append(f"{name} ({type(exc).__name__})")
    for trainer in trainer_ids():
        package(trainer)
    print(f"trl {trl.__version__}: warmed; not importable here: {', '.join(missing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
