"""GRPO's conformance package: how ``GRPOTrainer`` is run and probed, and how each page's snippet is fed.

What a trainer package provides
===============================

A trainer takes part in the conformance tests by having a package ``tests/conformance/trainers/<id>/``, where
``<id>`` is the trainer's id (its folder in ``metrics/``). The driver finds it by its folder: nothing else is edited.
It is imported both by the tests (the project's virtualenv) and by ``record.py`` (the interpreter of each TRL
release under test), so at import time it needs nothing but ``torch``, ``packaging`` and the standard library;
``trl`` and ``transformers`` are imported inside ``run``. Its ``__init__.py`` exports:

``RECORDS``: tuple of dataclasses
    The kinds of record its probes capture (plain fields and tensors only; each has ``log_step``, the optimizer
    step it belongs to). ``Run.add(record)`` stores one, ``Run.of(Kind)`` and ``Run.within(Kind, step)`` read them.
``runs_for(release: str) -> list[str]``
    The names of the runs recorded for that TRL release.
``run(name: str, workdir: str) -> driver.Run``
    Train with the named configuration in ``workdir`` and return the run: ``args`` (the config's ``to_dict()``,
    made plain with ``tiny.plain``), ``log_history``, the records, ``templates`` (for each ``{placeholder}`` of the
    pages' keys, what it stood for in this run, e.g. ``{"name": [reward function names]}``) and ``facts`` (plain
    values the adapters need). Use ``tiny.make_tokenizer``, ``tiny.make_model`` and ``tiny.PROMPTS``: nothing may
    touch the Hugging Face Hub. ``record.py`` runs it quietly, on one thread, in a temporary folder, in the same
    process as the release's other trainers: a run leaves no global state behind (environment variables, the
    default dtype, a patched TRL or transformers function) that another trainer's runs would inherit.
``ADAPTERS: dict[str, dict[str, driver.Adapter]]``
    Per TRL release of a site line, per metric id (``<id>/<key>``, templates kept): the runs that feed the
    metric's snippet and how (``driver.Adapter``). A page is ``conformance.checked: true`` on a line exactly when
    its release has an adapter for it.
``TOLD_APART: dict[str, dict[str, str]]``
    Per older release of a site line, the metric ids whose computation TRL changed before the latest line in a way
    the runs show, with why: that release's snippet must fail on the latest release's runs and vice versa.

Optional: ``test_*.py`` modules beside it with the trainer's own checks of its runs (that the probes record what
TRL used, that the runs exercise the code paths the snippets describe). A test there that takes ``release`` runs
once per site line showing the trainer, and its ``runs`` fixture is that release's recorded runs by name
(``trainers/conftest.py``).
"""

from .adapters import ADAPTERS, TOLD_APART
from .records import RECORDS
from .runs import run, runs_for

__all__ = ["ADAPTERS", "RECORDS", "TOLD_APART", "run", "runs_for"]
