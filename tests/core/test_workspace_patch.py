"""Pure change-set logic: pointers, overlap, locks, all-or-nothing, fingerprints."""

from __future__ import annotations

import pytest

from durable_loop.core.registry import ToolRegistry
from durable_loop.core.workspace_patch import (
    WorkspaceError,
    WorkspaceLimits,
    apply_ops,
    change_set_fingerprint,
    normalize_ops,
    overlaps,
    proposal_id_for,
)

LIMITS = WorkspaceLimits(max_ops=3, max_change_bytes=200, max_document_bytes=300)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("/a", "/a", True),
        ("/a", "/a/b", True),
        ("/a/b", "/a", True),
        ("", "/anything", True),
        ("/a", "/ab", False),
        ("/a/b", "/a/c", False),
        ("/a~1b", "/a/b", False),
    ],
)
def test_overlap_is_by_pointer_tokens(a, b, expected):
    assert overlaps(a, b) is expected


def test_ops_apply_in_order_to_a_copy():
    doc = {"tags": ["a"], "n": 1}
    applied = apply_ops(
        doc,
        [
            {"op": "add", "path": "/tags/0", "value": "z"},
            {"op": "copy", "from": "/n", "path": "/m"},
            {"op": "test", "path": "/tags/1", "value": "a"},
        ],
        locks=[],
        limits=LIMITS,
        label="draft",
    )
    assert applied.document == {"tags": ["z", "a"], "n": 1, "m": 1}
    assert applied.paths == ["/tags", "/m"]
    assert doc == {"tags": ["a"], "n": 1}


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ([], "INVALID_ARGS"),
        ("not a list", "INVALID_ARGS"),
        ([1], "INVALID_ARGS"),
        ([{"op": "add", "path": "/a", "value": 1, "extra": 2}], "INVALID_ARGS"),
        ([{"op": "move", "path": "/a"}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/a~2", "value": 1}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/a", "value": float("inf")}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/a", "value": {1, 2}}], "INVALID_ARGS"),
        ([{"op": "remove", "path": "/a"}] * 4, "ARGUMENTS_TOO_LARGE"),
        ([{"op": "add", "path": "/a", "value": "x" * 300}], "ARGUMENTS_TOO_LARGE"),
    ],
)
def test_malformed_change_sets_are_refused_with_a_code(raw, code):
    with pytest.raises(WorkspaceError) as err:
        normalize_ops(raw, LIMITS)
    assert err.value.code == code


def test_documents_have_a_size_limit():
    with pytest.raises(WorkspaceError) as err:
        apply_ops(
            {"a": "x" * 150},
            [{"op": "copy", "from": "/a", "path": "/b"}],
            locks=[],
            limits=LIMITS,
            label="facts",
        )
    assert err.value.code == "WORKSPACE_TOO_LARGE"


def test_fingerprint_binds_exact_content_not_key_order():
    ops = [{"op": "replace", "path": "/t", "value": {"a": 1, "b": 2}}]
    same = [{"value": {"b": 2, "a": 1}, "path": "/t", "op": "replace"}]
    other = [{"op": "replace", "path": "/t", "value": {"a": 1, "b": 3}}]
    assert change_set_fingerprint("w", ops) == change_set_fingerprint("w", same)
    assert change_set_fingerprint("w", ops) != change_set_fingerprint("w", other)
    assert change_set_fingerprint("w", ops) != change_set_fingerprint("v", ops)


def test_proposal_ids_are_deterministic_per_call():
    key = "session-s1:call_0:4"
    assert proposal_id_for(key) == proposal_id_for(key)
    assert proposal_id_for(key) != proposal_id_for("session-s1:call_0:9")
    assert proposal_id_for(key).startswith("p-")


def test_facts_commit_can_never_be_registered_as_a_tool():
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="human decision"):
        registry.register(lambda: None, name="facts_commit", parameters={"type": "object"})
