"""SFT's conformance package (trainer id ``sft``): how ``SFTTrainer`` is run and probed, and how each page's snippet is
fed. The interface is the one stated in ``trainers/grpo/__init__.py``.

SFT logs through ``Trainer.log``: a log entry ``step == s`` averages the micro-batches of the optimizer steps after
the previous entry up to ``s`` (``driver.Run.within``). Evaluation entries (``eval_*``) are kept out of the runs'
``log_history`` (HF's ``eval_runtime`` and friends are no metric of SFT's): ``runs.run`` moves them into
``facts["eval_log"]``, and ``test_runs.py`` checks the ``eval_`` forms against the same snippets, fed with the
evaluation batches.
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
