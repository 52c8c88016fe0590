"""`AtlasDoctorCallback`: the doctor's rules applied while a run trains. After each log it evaluates the rules on
the last logged values, warns once per finding (with the page to read), never raises and never touches training.
Users import it as ``from rl_metrics_atlas import AtlasDoctorCallback``."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from ..install import PROJECT
from .evaluate import Finding, diagnose
from .history import BadInput, from_rows
from .report import Words


class RunHealthWarning(UserWarning):
    """A rule of RL Metrics Atlas holds on the run being trained."""


def _plain(value: Any) -> Any:
    return value if isinstance(value, int | float | str | bool | type(None)) else str(value)


class AtlasDoctorCallback(TrainerCallback):
    """Warn once per finding of the atlas's rules while training. ``lang``: the language of the warnings (default:
    the atlas's default); ``trainer`` and ``trl``: the trainer id and TRL release or line (default: the trainer
    found from the logged keys, the installed TRL); ``root``: the atlas checkout whose rules apply."""

    def __init__(self, lang: str | None = None, trainer: str | None = None, trl: str | None = None,
                 root: str | Path | None = None):
        self.lang, self.trainer, self.trl = lang, trainer, trl
        self.root = Path(root) if root else PROJECT
        self.findings: list[Finding] = []
        self.off: str | None = None  # why the callback turned itself off
        self._book: dict[str, Any] | None = None
        self._settings: dict[str, Any] = {}
        self._rows: list[tuple[int, dict[str, Any]]] = []
        self._seen: set[tuple[str, str]] = set()
        self._tail = 0

    # --- transformers' callback events: each one guarded, so that nothing can stop the training -------------------

    def on_train_begin(self, args, state, control, **kwargs):
        self._guard(self._begin, args)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self._book is not None and logs:
            self._guard(self._log, state.global_step, logs)

    def _guard(self, fn, *a: Any) -> None:
        if self.off is not None:
            return
        try:
            fn(*a)
        except Exception as exc:  # noqa: BLE001 - a health check must never end a training run
            self.off = f"{type(exc).__name__}: {exc}"
            self._book = None
            warnings.warn(f"atlas doctor: turned itself off ({self.off})", RunHealthWarning, stacklevel=3)

    def _begin(self, args: Any) -> None:
        from .rulebook import load_book

        self._book = load_book(self.root)
        self.lang = self.lang or self._book["default_lang"]
        if self.lang not in self._book["langs"]:
            raise ValueError(f"lang '{self.lang}' is not a language of the atlas ({', '.join(self._book['langs'])})")
        if self.trl is None:
            try:
                import trl

                self.trl = trl.__version__
            except ImportError:
                pass
        to_dict = getattr(args, "to_dict", None)
        self._settings = {k: _plain(v) for k, v in (to_dict() if to_dict else vars(args)).items()}
        rules = [r for ln in self._book["lines"] for t in ln["trainers"] for m in t["metrics"] for r in m["rules"]]
        self._tail = 2 * max((r.get("window") or r.get("n") or 1 for r in rules), default=1)

    def _log(self, step: int, logs: dict[str, Any]) -> None:
        self._rows.append((step, dict(logs)))
        del self._rows[:-self._tail]
        try:
            history = from_rows("training", "callback", self._rows)
            d = diagnose(self._book, history, trainer=self.trainer, trl=self.trl, settings=self._settings)
        except BadInput:  # nothing the atlas knows logged yet
            return
        self.trainer = d.trainer["id"]  # found once, kept: a later log cannot switch trainers
        w = Words(self._book, self.lang)
        for f in d.findings:
            if (f.rule["id"], f.key) in self._seen:
                continue
            self._seen.add((f.rule["id"], f.key))
            self.findings.append(f)
            warnings.warn(w("doctor_callback", step=f.since, key=f.key, words=w.text(f.rule["words"]),
                            means=w.text(f.rule["means"]), try_=w.text(f.rule["try"]), url=f.metric["url"][self.lang]),
                          RunHealthWarning, stacklevel=4)
