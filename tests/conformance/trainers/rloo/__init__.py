"""RLOO's conformance package (the interface is stated in ``trainers/grpo/__init__.py``): how ``RLOOTrainer`` is
run and probed in each documented release, and how each page's snippet is fed. TRL 0.22 replaced the PPO-style
trainer by a GRPO-style one of the same name, so the package holds both: the 0.11 line's release (0.11.4) records
PPO-style runs, the 0.26, 1.12 and 1.16 lines GRPO-style ones (``runs.runs_for``)."""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
