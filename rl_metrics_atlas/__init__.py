"""RL Metrics Atlas, the names users import.

    from rl_metrics_atlas import AtlasDoctorCallback
    trainer = GRPOTrainer(model=..., args=..., reward_funcs=..., callbacks=[AtlasDoctorCallback(lang="en")])
    trainer.train()  # warns once per unhealthy curve, with the page that explains it

``doctor(path)`` reads a finished run (trainer_state.json, TensorBoard events, a W&B export, JSON lines) and returns
its diagnosis, as ``atlas doctor PATH`` does. Importing this package is cheap: transformers (and torch) are imported
only when ``AtlasDoctorCallback`` is first used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["AtlasDoctorCallback", "RunHealthWarning", "doctor"]


def doctor(path: str | Path, trainer: str | None = None, trl: str | None = None,
           settings: dict[str, Any] | None = None, root: str | Path | None = None) -> Any:
    """The diagnosis of the run logged at ``path`` (see ``atlas doctor``); `BadInput` when it cannot be read."""
    from generator.doctor.evaluate import diagnose
    from generator.doctor.readers import read_history
    from generator.doctor.rulebook import load_book
    from generator.install import PROJECT

    return diagnose(load_book(Path(root) if root else PROJECT), read_history(path), trainer, trl, settings)


def __getattr__(name: str) -> Any:
    if name in ("AtlasDoctorCallback", "RunHealthWarning"):
        from generator.doctor import callback

        return getattr(callback, name)
    raise AttributeError(f"module 'rl_metrics_atlas' has no attribute '{name}'")
