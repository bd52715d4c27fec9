"""Hostile change sets through the workspace patch ops: a new document or a coded
WorkspaceError, all or nothing, and locked paths never change."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from durable_loop.core.errors import ErrorCode
from durable_loop.core.workspace_patch import (
    OPS,
    WorkspaceError,
    WorkspaceLimits,
    apply_ops,
    normalize_ops,
    overlaps,
    read_path,
)
from tests.hostile.budget import fuzz, hit
from tests.hostile.strategies import JSON_VALUES, NASTY_TEXT, SMALL_VALUES

LIMITS = WorkspaceLimits(max_ops=20, max_change_bytes=20_000, max_document_bytes=50_000)
CODES = {
    ErrorCode.INVALID_ARGS,
    ErrorCode.ARGUMENTS_TOO_LARGE,
    ErrorCode.LOCKED,
    ErrorCode.WORKSPACE_TOO_LARGE,
}
DOC: dict[str, Any] = {
    "title": "t",
    "tags": ["a", "b"],
    "meta": {"owner": "ann", "n": 1},
    "": {"~": [1]},
}
POINTERS = st.one_of(
    st.sampled_from(
        [
            "",
            "/",
            "/title",
            "/tags/0",
            "/tags/-",
            "/tags/01",
            "/tags/9",
            "/meta/owner",
            "/meta/owner/x",
            "/~1",
            "/~0",
            "/~2",
            "/",
            "//",
            "title",
            "/meta",
            "/tags/0/x",
        ]
    ),
    NASTY_TEXT.map(lambda t: "/" + t),
    NASTY_TEXT,
)
OP = st.fixed_dictionaries(
    {"op": st.sampled_from([*OPS, "delete", ""]), "path": POINTERS},
    optional={"value": SMALL_VALUES, "from": POINTERS, "extra": st.none()},
)
MISSHAPEN_OP = st.dictionaries(
    st.sampled_from(["op", "path", "value", "from", "x"]), st.one_of(SMALL_VALUES, POINTERS)
)
CHANGE_SETS = st.one_of(
    st.lists(OP, max_size=6),
    st.lists(OP, max_size=6),
    st.lists(st.one_of(OP, MISSHAPEN_OP), min_size=1, max_size=4),
    JSON_VALUES,
)
LOCKS = st.lists(st.sampled_from(["/title", "/tags", "/meta/owner", "/tags/1", ""]), max_size=2)


@fuzz(1000)
@given(raw=CHANGE_SETS, locks=LOCKS)
@example(raw=[{"op": "move", "from": "/meta", "path": "/meta/inner"}], locks=[])
@example(raw=[{"op": "add", "path": "/x", "value": float("nan")}], locks=[])
@example(raw=[{"op": "add", "path": "/x", "value": "\ud800"}], locks=[])
@example(raw=[{"op": "replace", "path": "", "value": []}], locks=[])
@example(raw=[{"op": "add", "path": "/a\x00b", "value": 1}], locks=[])
@example(raw=[{"op": "copy", "from": "/tags", "path": "/tags/-"}] * 20, locks=[])
def test_change_sets_apply_whole_or_not_at_all(raw: Any, locks: list[str]) -> None:
    hit("workspace: patch ops")
    document = copy.deepcopy(DOC)
    try:
        ops = normalize_ops(raw, LIMITS)
        applied = apply_ops(document, ops, locks=locks, limits=LIMITS, label="facts")
    except WorkspaceError as err:
        assert err.code in CODES, err.code
        assert err.message
        assert document == DOC
        return
    assert document == DOC, "the input document changed in place"
    assert isinstance(applied.document, dict)
    json.dumps(applied.document, allow_nan=False)
    for lock in locks:
        assert not any(overlaps(lock, path) for path in applied.paths), (lock, applied.paths)
        if _exists(DOC, lock):
            assert read_path(applied.document, lock) == read_path(DOC, lock)


def _exists(document: dict[str, Any], path: str) -> bool:
    try:
        read_path(document, path)
    except WorkspaceError:
        return False
    return True
