"""Read source files into typed models, keeping file and line for every field. Never writes anything."""

from __future__ import annotations

import difflib
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, RootModel, ValidationError

from ..errors import SourceError, SourceErrors, did_you_mean
from . import parsed
from .yamlsrc import Document, Path, dotted


@dataclass(frozen=True)
class Loaded:
    """A model with the document it came from (for error lines)."""

    model: Any
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
    if kind == "literal_error" and isinstance(err.get("input"), str):
        msg += did_you_mean(err["input"], re.findall(r"'([^']*)'", err["ctx"]["expected"]))
    return msg[0].lower() + msg[1:] if msg else kind


def _split_loc(err: dict[str, Any], data: Any) -> tuple[Path, Path | None]:
    """The error's location in the data, and where the union it failed in sits (None outside unions).
    pydantic inserts union branch names ('Tensor', 'float', 'list[...]') and 'root' into locations: they are
    the parts that do not index into the data (except the name of a missing field, last)."""
    loc: list[str | int] = []
    union: Path | None = None
    parts = err["loc"]
    for i, part in enumerate(parts):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        elif i == len(parts) - 1 and err["type"] == "missing" and isinstance(part, str):
            pass
        else:
            union = tuple(loc) if union is None else union
            continue
        loc.append(part)
    return tuple(loc), union


def _one_per_union(raw: list[tuple[dict[str, Any], Path, Path | None]]) -> list[tuple[dict[str, Any], Path]]:
    """A value that fits no branch of a union gets one error, not one per branch: the errors of the branch it got
    furthest into (a mapping meant as a Tensor), or one line naming every type it could have been."""
    out: list[tuple[dict[str, Any], Path]] = []
    groups: dict[Path, list[tuple[dict[str, Any], Path]]] = {}
    for err, loc, union in raw:
        if union is None:
            out.append((err, loc))
        else:
            groups.setdefault(union, []).append((err, loc))
    for union, errs in groups.items():
        deepest = max(len(loc) for _, loc in errs)
        if deepest > len(union) or len(errs) == 1:
            out += [(err, loc) for err, loc in errs if len(loc) == deepest]
            continue
        kinds = [f"a mapping ({e['ctx']['class_name']})" if e["type"] == "model_type"
                 else e["msg"].removeprefix("Input should be ").split(",")[0] for e, _ in errs]
        kinds = list(dict.fromkeys(kinds))
        msg = "Input should be " + (", ".join(kinds[:-1]) + " or " + kinds[-1] if len(kinds) > 1 else kinds[0])
        out.append(({**errs[0][0], "msg": msg}, union))
    return out


def validate_model(doc: Document, model: type[BaseModel]) -> tuple[BaseModel | None, list[SourceError]]:
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        raw = _one_per_union([(err, *_split_loc(err, doc.data)) for err in exc.errors(include_url=False)])
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
    try:
        raw = path.read_bytes()
    except OSError as exc:  # a dangling link, a folder named *.yaml, no permission
        return None, [SourceError(rel, 1, "file", f"cannot be read: {exc.strerror or exc}")]
    return parsed.parse(rel, raw)


def read_optional(path: FsPath, root: FsPath) -> Document | None:
    """The parsed file at ``path``, or None when there is none; `SourceErrors` when it cannot be read or parsed."""
    if not path.exists() and not path.is_symlink():
        return None
    doc, errors = read_document(path, root)
    if doc is None:
        raise SourceErrors(errors)
    return doc


def read_required(path: FsPath, root: FsPath) -> Document:
    """The parsed file at ``path``; `SourceErrors` when it is missing or cannot be read or parsed."""
    doc = read_optional(path, root)
    if doc is None:
        raise SourceErrors([SourceError(path.relative_to(root).as_posix(), 1, "file", "the file is missing")])
    return doc


def load_files(paths: list[FsPath], root: FsPath,
               model: type[BaseModel]) -> tuple[list[Loaded], list[Document], list[SourceError]]:
    """Parse and validate ``paths`` as ``model``: the valid models, every parsed document (valid or not, for
    checks that work on raw text), and all errors found."""
    loaded: list[Loaded] = []
    docs: list[Document] = []
    errors: list[SourceError] = []
    for path in paths:
        doc, errs = read_document(path, root)
        errors += errs
        if doc is None:
            continue
        docs.append(doc)
        value, errs = validate_model(doc, model)
        errors += errs
        if value is not None:
            loaded.append(Loaded(value, doc))  # type: ignore[arg-type]
    return loaded, docs, errors


def json_schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    """The JSON Schema of a source file for editors (`atlas schema`; committed beside the files it describes)."""
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = title
    return schema
