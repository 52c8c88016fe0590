"""Legacy PPO's conformance package (``PPOTrainer`` with ``step()``, TRL 0.7.10 - 0.11.4): how the trainer is run
and probed, and how each page's snippet is fed. The interface is stated in ``trainers/grpo/__init__.py``.

Legacy PPO has no ``Trainer.state.log_history``: ``step()`` returns a dict and ``log_stats()`` adds the ``env/*`` keys
(and the W&B ``game_log`` table) before handing everything to ``accelerator.log``. The probes replace that ``log`` and
append what it receives to the run's ``log_history``, one entry per ``step()`` call with ``step`` set to its number,
so the driver reads it like any other trainer's. Histogram keys hold lists there (numpy arrays in TRL).
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
