"""Which calls need approval, what a person approves (fingerprint), and edit checks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from durable_loop.core.approvals import (
    ApprovalSettings,
    edit_problem,
    edited_fields,
    needs_approval,
    tool_call_fingerprint,
)
from durable_loop.core.tools import ToolSpec

PAY = ToolSpec(
    name="pay_invoice",
    parameters={
        "type": "object",
        "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    },
)


def test_spec_flag_globs_and_conditions():
    flagged = PAY.model_copy(update={"requires_approval": True})
    assert needs_approval(flagged, ApprovalSettings(), {"amount": 1, "to": "a"})
    assert not needs_approval(PAY, ApprovalSettings(), {"amount": 1, "to": "a"})
    by_glob = ApprovalSettings(tools=["pay_*"])
    assert needs_approval(PAY, by_glob, {"amount": 1, "to": "a"})
    assert not needs_approval(PAY, ApprovalSettings(tools=["send_*"]), {"amount": 1})
    over_100 = ApprovalSettings(
        tools=["pay_*"],
        conditions={"pay_*": {"properties": {"amount": {"exclusiveMinimum": 100}}}},
    )
    assert needs_approval(PAY, over_100, {"amount": 101, "to": "a"})
    assert not needs_approval(PAY, over_100, {"amount": 100, "to": "a"})


def test_a_condition_must_be_a_json_schema():
    with pytest.raises(ValidationError, match="is not a JSON Schema"):
        ApprovalSettings(conditions={"pay": {"type": "no-such-type"}})


def test_fingerprint_binds_tool_and_canonical_arguments():
    one = tool_call_fingerprint("pay", {"amount": 1, "to": "a"})
    assert one == tool_call_fingerprint("pay", {"to": "a", "amount": 1})
    assert one != tool_call_fingerprint("pay", {"amount": 2, "to": "a"})
    assert one != tool_call_fingerprint("refund", {"amount": 1, "to": "a"})
    assert len(one) == 64


def test_edits_name_changed_fields_and_are_checked():
    before = {"amount": 1, "to": "a", "memo": "x"}
    assert edited_fields(before, {"amount": 2, "to": "a", "note": "y"}) == [
        "amount",
        "memo",
        "note",
    ]
    assert edit_problem(PAY, {"amount": 2, "to": "b"}, 1000) is None
    wrong = edit_problem(PAY, {"amount": "2", "to": "b"}, 1000)
    assert wrong is not None and wrong.code == "INVALID_ARGS" and "amount" in wrong.message
    large = edit_problem(PAY, {"amount": 2, "to": "b" * 50}, 40)
    assert large is not None and large.code == "ARGUMENTS_TOO_LARGE"
