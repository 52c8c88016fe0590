"""Reading a run's history from what users have: a Hugging Face ``trainer_state.json`` (its ``log_history``), a
TensorBoard event file or a folder of them, a Weights & Biases history export (CSV, or ``wandb-history.jsonl``),
or a JSON-lines file of logged dicts. Each reader gives `(step, {key: value})` rows; anything it cannot read is one
`BadInput` line."""

from __future__ import annotations

import csv
import json
import struct
from collections.abc import Iterator
from pathlib import Path

from .history import BadInput, History, from_rows

# columns or fields that hold the optimizer step, best first (W&B's `_step` counts its own log calls)
STEP_NAMES = ("step", "train/global_step", "global_step", "Step", "_step")
TB_PATTERN = "events.out.tfevents.*"


def _step_of(row: dict, where: str) -> int:
    for name in STEP_NAMES:
        value = row.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    raise BadInput(where, f"a logged row has no step (none of {', '.join(STEP_NAMES)})")


def _json_error(path: Path, exc: json.JSONDecodeError, line: int | None = None) -> BadInput:
    at = f"line {line}" if line is not None else f"line {exc.lineno} column {exc.colno}"
    return BadInput(path, f"not valid JSON at {at}: {exc.msg}" + (
        " (the file looks truncated)" if exc.msg.startswith(("Expecting", "Unterminated")) else ""))


def read_trainer_state(path: Path) -> History:
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.strip():
        raise BadInput(path, "the file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, exc) from None
    history = data.get("log_history") if isinstance(data, dict) else data
    if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
        raise BadInput(path, "expected a Hugging Face trainer_state.json (an object with a `log_history` list of "
                             "logged dicts) or a JSON list of logged dicts")
    if not history:
        raise BadInput(path, "the history is empty: `log_history` holds no logged step")
    return from_rows(str(path), "trainer_state.json", ((_step_of(e, str(path)), e) for e in history))


def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict]]:
    with path.open(encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _json_error(path, exc, n) from None
            if not isinstance(row, dict):
                raise BadInput(path, f"line {n} is not a JSON object of logged values")
            yield _step_of(row, f"{path}:{n}"), row


def read_jsonl(path: Path) -> History:
    kind = "W&B history (JSON lines)" if path.name == "wandb-history.jsonl" else "JSON lines"
    return from_rows(str(path), kind, _jsonl_rows(path))


def _csv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    with path.open(encoding="utf-8", errors="replace", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if not header:
            raise BadInput(path, "the CSV file is empty")
        # a W&B panel export names its columns "<run> - <key>" and adds "<run> - <key>__MIN" and "__MAX"
        names = [h.split(" - ", 1)[-1].strip() for h in header]
        step_col = next((names.index(s) for s in STEP_NAMES if s in names), None)
        if step_col is None:
            raise BadInput(path, f"no step column (expected one of {', '.join(STEP_NAMES)}; the header has "
                                 f"{', '.join(names[:5])}{', ...' if len(names) > 5 else ''})")
        keep = [i for i, n in enumerate(names) if i != step_col and not n.endswith(("__MIN", "__MAX"))]
        for n, cells in enumerate(reader, start=2):
            if not cells or step_col >= len(cells) or not cells[step_col].strip():
                continue
            try:
                step = int(float(cells[step_col]))
            except ValueError:
                raise BadInput(path, f"line {n}: the step {cells[step_col]!r} is not a number") from None
            # an empty cell: not logged at this step; "NaN" (or "nan"): logged as NaN or None
            yield step, {names[i]: cells[i] for i in keep if i < len(cells) and cells[i].strip()}


def read_csv(path: Path) -> History:
    return from_rows(str(path), "CSV", _csv_rows(path))


def _records(path: Path) -> Iterator[bytes]:
    """The records of a TFRecord file (TensorBoard's format); a record cut short at the end (a writer killed
    mid-write) ends the file."""
    with path.open("rb") as f:
        while True:
            head = f.read(12)
            if len(head) < 12:
                return
            (length,) = struct.unpack("<Q", head[:8])
            data = f.read(length)
            if len(data) < length or len(f.read(4)) < 4:
                return
            yield data


def _scalar(value) -> float | None:
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind == "tensor" and value.metadata.plugin_data.plugin_name in ("scalars", ""):
        t = value.tensor
        if t.float_val:
            return float(t.float_val[0])
        if t.double_val:
            return float(t.double_val[0])
        if len(t.tensor_content) in (4, 8):
            return float(struct.unpack("<f" if len(t.tensor_content) == 4 else "<d", t.tensor_content)[0])
    return None


def read_tensorboard(path: Path) -> History:
    from tensorboardX.proto.event_pb2 import Event  # protobuf: imported only for TensorBoard files

    files = sorted(path.rglob(TB_PATTERN)) if path.is_dir() else [path]
    if not files:
        raise BadInput(path, f"no TensorBoard event file ({TB_PATTERN}) in this folder")
    rows: list[tuple[int, dict]] = []
    for file in files:
        for n, data in enumerate(_records(file)):
            event = Event()
            try:
                event.ParseFromString(data)
            except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
                raise BadInput(file, f"record {n + 1} is not a TensorBoard event (a corrupt file?)") from None
            if event.HasField("summary"):
                row = {v.tag: x for v in event.summary.value if (x := _scalar(v)) is not None}
                if row:
                    rows.append((event.step, row))
    if not rows:
        raise BadInput(path, "the TensorBoard events hold no scalar" + (f" ({len(files)} event files read)"
                                                                      if len(files) > 1 else ""))
    return from_rows(str(path), "TensorBoard events", rows)


def read_history(path: str | Path) -> History:
    """The history at ``path``: a file of one of the formats, or a folder holding a trainer_state.json, W&B's
    files or TensorBoard event files."""
    p = Path(path)
    if not p.exists():
        raise BadInput(p, "no such file or folder")
    if p.is_dir():
        for name, reader in (("trainer_state.json", read_trainer_state), ("wandb-history.jsonl", read_jsonl)):
            found = sorted(p.rglob(name))
            if len(found) == 1:
                return reader(found[0])
            if len(found) > 1:
                raise BadInput(p, f"{len(found)} files named {name} in this folder (one per checkpoint?): name "
                                  f"one, e.g. {found[-1]}")
        return read_tensorboard(p)
    if p.name.startswith("events.out.tfevents"):
        return read_tensorboard(p)
    try:
        if p.suffix == ".csv":
            return read_csv(p)
        if p.suffix in (".jsonl", ".ndjson"):
            return read_jsonl(p)
        if p.suffix == ".json":
            return read_trainer_state(p)
    except UnicodeDecodeError:
        raise BadInput(p, "not a text file") from None
    raise BadInput(p, "unknown format: give a trainer_state.json, a TensorBoard event file or folder, a W&B "
                      "history export (.csv or wandb-history.jsonl) or a .jsonl file of logged dicts")
