"""DPO's conformance package: how ``DPOTrainer`` is run and probed, and how each page's snippet is fed. The
interface is the one stated in ``trainers/grpo/__init__.py``."""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
