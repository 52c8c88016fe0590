"""Read source files into typed models, keeping file and line for every field. Never writes anything."""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError

from .errors import SourceError, did_you_mean
from .schema import Metric
from .yamlsrc import Document, Path, dotted, parse


@dataclass(frozen=True)
class Loaded:
    """A model with the document it came from (for error lines)."""

    model: Metric
    doc: Document

    @property
    def path(self) -> str:
        return self.doc.path

    def line(self, *loc: str | int) -> int:
        return self.doc.line_of(tuple(loc))


def _unwrap(tp: Any) -> list[Any]:
    """The model classes an annotation can hold (through Optional, list, dict, Annotated)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType, list, dict):
        args = typing.get_args(tp)
        if origin is dict:
            args = args[1:]
        return [m for a in args for m in _unwrap(a)]
    if isinstance(tp, type) and issubclass(tp, BaseModel) and not issubclass(tp, RootModel):
        return [tp]
    return []


def _fields_at(model: type[BaseModel], loc: Path) -> list[str]:
    """Field names allowed at ``loc`` (the mapping that holds the bad key)."""
    candidates: list[type[BaseModel]] = [model]
    for part in loc:
        if isinstance(part, int):
            continue
        nxt: list[type[BaseModel]] = []
        for m in candidates:
            if part in m.model_fields:
                nxt += _unwrap(m.model_fields[part].annotation)
        candidates = nxt or candidates
    return sorted({f for m in candidates for f in m.model_fields})


def _message(err: dict[str, Any], model: type[BaseModel], loc: Path) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        name = str(loc[-1])
        return f"unknown field '{name}'" + did_you_mean(name, _fields_at(model, loc[:-1]))
    if kind == "missing":
        return "required field is missing"
    msg = err["msg"]
    return msg[0].lower() + msg[1:] if msg else kind


def _clean_loc(loc: tuple[Any, ...]) -> Path:
    # pydantic inserts union branch names ('Tensor', 'float', 'function-after[...]') into locations
    return tuple(p for p in loc if isinstance(p, int) or (p and p[0].islower() and "[" not in p and p != "root"))


def validate_model(doc: Document, model: type[BaseModel]) -> tuple[BaseModel | None, list[SourceError]]:
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        raw = [(err, _clean_loc(err["loc"])) for err in exc.errors(include_url=False)]
        # a misspelt field is reported once, as unknown with a suggestion, not also as the missing field it meant
        meant = {
            loc[:-1] + (close,)
            for err, loc in raw if err["type"] == "extra_forbidden"
            for close in difflib.get_close_matches(str(loc[-1]), _fields_at(model, loc[:-1]), n=1, cutoff=0.6)
        }
        errors = []
        for err, loc in raw:
            if err["type"] == "missing" and loc in meant:
                continue
            line_loc = loc if err["type"] != "missing" else loc[:-1]
            errors.append(SourceError(doc.path, doc.line_of(line_loc), dotted(loc), _message(err, model, loc)))
        return None, errors


def read_document(path: FsPath, root: FsPath) -> tuple[Document | None, list[SourceError]]:
    rel = path.relative_to(root).as_posix()
    return parse(rel, path.read_bytes())


def load_metrics(root: FsPath) -> tuple[list[Loaded], list[Document], list[SourceError]]:
    """Every ``metrics/<trainer>/**/*.yaml`` under ``root``: the valid models, every parsed document (valid or
    not, for checks that work on raw text), and all errors found."""
    loaded: list[Loaded] = []
    docs: list[Document] = []
    errors: list[SourceError] = []
    for path in sorted((root / "metrics").rglob("*.y*ml")):
        doc, errs = read_document(path, root)
        errors += errs
        if doc is None:
            continue
        docs.append(doc)
        metric, errs = validate_model(doc, Metric)
        errors += errs
        if metric is not None:
            loaded.append(Loaded(metric, doc))  # type: ignore[arg-type]
    return loaded, docs, errors
