"""KTO's conformance package (trainer id ``kto``): how ``KTOTrainer`` is run and probed (``trl.KTOTrainer`` in 0.11,
1.12 and 1.16, ``trl.experimental.kto.KTOTrainer`` in 0.26), and how each page's snippet is fed. The interface is
the one stated in ``trainers/grpo/__init__.py``.

KTO logs through its own ``log``: the per-micro-batch values it collected since the previous log entry are reduced
there (sums over counts up to 1.5, plain means of per-micro-batch values from 1.6), so a log entry ``step == s``
belongs to the ``MicroBatch`` records of the optimizer steps after the previous entry (``driver.Run.within``).
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
