"""PPO's conformance package (trainer id ``ppo``): how TRL's PPO trainer (``PPOv2Trainer`` in 0.11,
``trl.experimental.ppo.PPOTrainer`` in 0.26 to 1.12) is run and probed, and how each page's snippet is fed. The
interface is the one stated in ``trainers/grpo/__init__.py``.

PPO logs once per update through ``self.log`` (it ignores ``logging_steps``), so every log entry is one update and
``driver.Run.within(kind, step)`` is that update's records: one ``Rollout`` and the ``MicroBatch`` records of its
PPO epochs x mini-batches x micro-batches.
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
