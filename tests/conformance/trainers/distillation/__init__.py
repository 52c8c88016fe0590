"""The distillation conformance package (trainer id ``distillation``): how ``DistillationTrainer`` (``trl`` from
1.10.0, so on the 1.12 and 1.16 lines) is run and probed, and how each page's snippet is fed. The interface is the
one stated in ``trainers/grpo/__init__.py``.

Every optimizer step samples one generation batch with the student, and each of its
``gradient_accumulation_steps`` micro-batches runs the teacher and the student on its slice. The probes record one
``GenBatch`` per generation, one ``MicroBatch`` per loss call (with both models' logits at every completion position)
and one ``OptStep`` per optimizer step.
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
