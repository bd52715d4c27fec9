"""JSON-pointer change sets (RFC 6902 via ``jsonpatch``): validation, locks, all-or-nothing.

Every failure is a :class:`WorkspaceError` with a code; a change set either applies as a
whole to a copy of the document or changes nothing.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

import jsonpatch
import jsonpointer
from pydantic import JsonValue

from durable_loop.core.canonical_json import canonical_dumps, sha256_hex, utf8_len
from durable_loop.core.errors import DurableLoopError, ErrorCode

OPS = ("add", "remove", "replace", "move", "copy", "test")
NEEDS_VALUE = frozenset({"add", "replace", "test"})
NEEDS_FROM = frozenset({"move", "copy"})

Doc = dict[str, JsonValue]
Op = dict[str, JsonValue]


@dataclass(frozen=True)
class WorkspaceLimits:
    max_ops: int = 100
    max_change_bytes: int = 64_000
    max_document_bytes: int = 1_000_000
    max_path_chars: int = 1_000


class WorkspaceError(DurableLoopError):
    """A change set or workspace write refused with a code (nothing was changed)."""


def _invalid(message: str) -> WorkspaceError:
    return WorkspaceError(ErrorCode.INVALID_ARGS, message)


def tokens(path: str) -> list[str]:
    if "\x00" in path:  # no database text column (PostgreSQL) can hold it
        raise _invalid(f"{path!r} contains a NUL character")
    try:
        return list(jsonpointer.JsonPointer(path).parts)
    except jsonpointer.JsonPointerException as err:
        raise _invalid(f"{path!r} is not a JSON pointer ({err}); use '/key/0/sub'") from None


def overlaps(a: str, b: str) -> bool:
    """True when one pointer equals or contains the other (changing one can change both)."""
    ta, tb = tokens(a), tokens(b)
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


def require_json(value: object, where: str) -> None:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise _invalid(f"{where}: value is not plain JSON ({err})") from None


def normalize_ops(raw: object, limits: WorkspaceLimits) -> list[Op]:
    """Check shape, JSON-ness and size of a change set before anything is applied."""
    if not isinstance(raw, list) or not raw:
        raise _invalid("ops must be a non-empty list of {op, path, value?, from?} objects")
    if len(raw) > limits.max_ops:
        raise WorkspaceError(
            ErrorCode.ARGUMENTS_TOO_LARGE,
            f"{len(raw)} ops; at most {limits.max_ops} per change set. Split the change.",
        )
    ops: list[Op] = []
    for index, item in enumerate(raw):
        where = f"ops[{index}]"
        if not isinstance(item, dict):
            raise _invalid(f"{where} must be an object")
        name = item.get("op")
        if name not in OPS:
            raise _invalid(f"{where}.op must be one of {', '.join(OPS)}; got {name!r}")
        extra = set(item) - {"op", "path", "value", "from"}
        if extra:
            raise _invalid(f"{where} has unknown member(s) {sorted(extra)}")
        for key in ("path", *(("from",) if name in NEEDS_FROM else ())):
            pointer = item.get(key)
            if not isinstance(pointer, str):
                raise _invalid(f"{where}.{key} must be a JSON pointer string")
            if len(pointer) > limits.max_path_chars:
                raise WorkspaceError(ErrorCode.ARGUMENTS_TOO_LARGE, f"{where}.{key} is too long")
            tokens(pointer)
        if name in NEEDS_VALUE and "value" not in item:
            raise _invalid(f"{where}: op {name!r} needs a 'value'")
        if "value" in item:
            require_json(item["value"], where)
        ops.append(dict(item))
    size = utf8_len(canonical_dumps(ops))  # type: ignore[arg-type]
    if size > limits.max_change_bytes:
        raise WorkspaceError(
            ErrorCode.ARGUMENTS_TOO_LARGE,
            f"change set is {size} bytes; the limit is {limits.max_change_bytes}. "
            "Send a smaller change.",
        )
    return ops


def _parent_is_list(doc: JsonValue, path: str) -> bool:
    parts = tokens(path)
    if not parts:
        return False
    try:
        parent = jsonpointer.JsonPointer.from_parts(parts[:-1]).resolve(doc)
    except jsonpointer.JsonPointerException:
        return False
    return isinstance(parent, list)


def parent(path: str) -> str:
    parts = tokens(path)
    return jsonpointer.JsonPointer.from_parts(parts[:-1]).path if parts else ""


def _touched(doc: JsonValue, op: Op) -> list[str]:
    """Paths an op may change; inserting into or removing from a list shifts the whole list."""
    name, path = str(op["op"]), str(op["path"])
    if name == "test":
        return []
    if name == "replace":
        return [path]
    shifting = _parent_is_list(doc, path)
    touched = [parent(path) if shifting else path]
    if name == "move":
        source = str(op["from"])
        touched.append(parent(source) if _parent_is_list(doc, source) else source)
    return touched


@dataclass(frozen=True)
class Applied:
    document: Doc
    paths: list[str]


def apply_ops(
    document: Doc, ops: list[Op], *, locks: list[str], limits: WorkspaceLimits, label: str
) -> Applied:
    """Apply ``ops`` to a copy of ``document``; raise before anything is kept on any failure."""
    working: JsonValue = copy.deepcopy(document)
    paths: list[str] = []
    for index, op in enumerate(ops):
        touched = _touched(working, op)
        for path in touched:
            held = [lock for lock in locks if overlaps(lock, path)]
            if held:
                raise WorkspaceError(
                    ErrorCode.LOCKED,
                    f"ops[{index}] changes {path or '/'} but {', '.join(held)} is locked; "
                    "locked paths change only by a person. Leave them as they are.",
                )
        try:
            working = jsonpatch.apply_patch(working, [op], in_place=True)
        except jsonpatch.JsonPatchTestFailed as err:
            raise _invalid(f"ops[{index}] test failed: {err}") from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
            hint = (
                f'; {op["path"]} does not exist yet: use "op": "add" to create it'
                if op["op"] == "replace" and "non-existent" in str(err)
                else ""
            )
            raise _invalid(
                f"ops[{index}] ({op['op']} {op['path']}) cannot apply: {err}{hint}"
            ) from None
        paths.extend(p for p in touched if p not in paths)
        if op["op"] == "copy":  # copies can double the document per op: check each one
            _check_size(working, limits, label)
    if not isinstance(working, dict):
        raise _invalid(f"the {label} must stay a JSON object")
    _check_size(working, limits, label)
    return Applied(document=working, paths=paths)


def _check_size(document: JsonValue, limits: WorkspaceLimits, label: str) -> None:
    size = utf8_len(canonical_dumps(document))
    if size > limits.max_document_bytes:
        raise WorkspaceError(
            ErrorCode.WORKSPACE_TOO_LARGE,
            f"the {label} would be {size} bytes; the limit is {limits.max_document_bytes}",
        )


def read_path(document: Doc, path: str) -> JsonValue:
    try:
        value: JsonValue = jsonpointer.resolve_pointer(document, path)
    except jsonpointer.JsonPointerException as err:
        raise _invalid(f"nothing at {path!r}: {err}") from None
    return value


def change_set_fingerprint(workspace_id: str, ops: list[Op]) -> str:
    """Binds an approval to the exact content: workspace plus canonical change set."""
    return sha256_hex(canonical_dumps({"workspace_id": workspace_id, "changes": ops}))  # type: ignore[dict-item]


def proposal_id_for(idempotency_key: str) -> str:
    """Deterministic per tool call (workflow id, call id, result seq): retries reuse it."""
    return "p-" + sha256_hex(idempotency_key)[:16]
