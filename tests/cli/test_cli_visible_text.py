"""What the people commands print shows hidden characters as escapes (issue 28): an
approver's CR/LF cannot print a forged line, the model's U+202E cannot reorder a field.
Rendered from models, no server: the listings are what ``tool-calls list``, ``pending``,
``proposals`` and ``approve``/``reject`` print."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta

import pytest

from durable_loop.cli.commands import proposals as proposals_command
from durable_loop.cli.commands import tool_calls as tool_calls_command
from durable_loop.cli.commands.decide import not_pending
from durable_loop.cli.commands.pending import listing_lines
from durable_loop.cli.commands.people_view import (
    call_decided_line,
    pointer_to_calls,
    proposal_decided_line,
)
from durable_loop.client.waiting import SessionWaiting, WaitingList
from durable_loop.core.approval_models import PendingToolCall, ToolApprovalList, ToolCallDecided
from durable_loop.core.proposals import DecisionResult, PendingProposal, ProposalList

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
FORGED = "alice\r\nFAKE-LINE: approved by root"
ARGS = {"amount": 250, "to": "acme\u202e1337", "memo": "ok\u2066\x07", "city": "東京 café 🎉"}


def held(call_id: str = "c1", tool: str = "pay", session_id: str = "s1") -> PendingToolCall:
    return PendingToolCall.model_validate(
        {
            "call_id": call_id,
            "tool": tool,
            "arguments": ARGS,
            "fingerprint": "f" * 64,
            "session_id": session_id,
            "message_id": "m1",
            "turn": 1,
            "assistant_seq": 2,
            "call_index": 0,
            "result_seq": 3,
            "created_at": NOW,
            "expires_at": NOW + timedelta(hours=1),
        }
    )


def decided(by: str = FORGED, tool: str = "pay") -> ToolCallDecided:
    return ToolCallDecided(
        call_id="c0",
        tool=tool,
        message_id="m1",
        status="confirmed",
        decided_by=by,
        fingerprint="f" * 64,
        comment="fine\r\nFAKE-LINE: comment",
        edited_fields=["to\u202e"],
        decided_at=NOW,
    )


def proposal(summary: str) -> PendingProposal:
    return PendingProposal(
        proposal_id="p1",
        workspace_id="w1",
        changes=[{"op": "replace", "path": "/to\u202e", "value": "acme\u202e1337\nx"}],
        fingerprint="e" * 64,
        summary=summary,
        session_id="s1",
        turn=1,
        call_id="c9",
        created_at=NOW,
        expires_at=NOW + timedelta(hours=1),
    )


def assert_honest(text: str) -> None:
    """One line per printed line: no raw control, bidi or other invisible character, and
    no line a value forged."""
    lines = text.split("\n")
    assert not any(line.lstrip().startswith("FAKE-LINE") for line in lines), text
    hidden = {
        f"U+{ord(c):04X}"
        for c in text
        if c != "\n" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp", "Cs"}
    }
    assert not hidden, f"raw hidden characters printed: {hidden}"


def test_tool_calls_list_shows_escapes_not_forged_lines(capsys: pytest.CaptureFixture[str]):
    listing = ToolApprovalList.model_validate(
        {
            "pending": [held(call_id="c1\u202e", tool="pay\n")],
            "decided": [decided()],
            "refused": [
                {
                    "id": "c2\u2067",
                    "approver": FORGED,
                    "error": {"code": "NOT_PENDING", "message": "no call c2\u2067\nFAKE-LINE: x"},
                    "refused_at": NOW,
                }
            ],
        }
    )
    tool_calls_command.print_listing(listing, "s1")
    out = capsys.readouterr().out
    assert_honest(out)
    assert "c1\\u202e  pay\\n  turn 1" in out
    assert '"to": "acme\\u202e1337"' in out  # as JSON writes the escape: it means the same
    assert '"memo": "ok\\u2066\\u0007"' in out
    assert '"city": "東京 café 🎉"' in out
    assert "c0  pay  approved (edited: to\\u202e) by alice\\r\\nFAKE-LINE: approved by root" in out
    assert "c2\\u2067  refused NOT_PENDING from alice\\r\\nFAKE-LINE: approved by root" in out


def test_pending_lines_show_escapes():
    waiting = WaitingList(
        sessions=[
            SessionWaiting(
                session_id="s1\u202e",
                tool_calls=[held(call_id="c1\u200b", session_id="child\n")],
                proposals=[proposal("retitle\r\nFAKE-LINE: approved")],
            )
        ]
    )
    lines = listing_lines(waiting, None)
    text = "\n".join(lines)
    assert_honest(text)
    assert lines[0] == "s1\\u202e: 2 waiting"
    assert lines[1].startswith("  c1\\u200b  tool call  pay {")
    assert "(in sub-agent child\\n)" in lines[1]
    assert "acme\\u202e1337" in lines[1]
    assert lines[2].startswith("  p1        proposal   replace /to\\u202e: retitle\\r\\nFAKE-LINE")


def test_proposals_list_and_decisions_show_escapes(capsys: pytest.CaptureFixture[str]):
    result = DecisionResult(
        proposal_id="p0", status="rejected", decided_by=FORGED, comment="x", decided_at=NOW
    )
    listing = ProposalList(pending=[proposal("new title\u2028FAKE-LINE")], decided=[result])
    proposals_command.print_listing(listing, "s1")
    out = capsys.readouterr().out
    assert_honest(out)
    assert "  summary: new title\\u2028FAKE-LINE" in out
    assert '  replace /to\\u202e = "acme\\u202e1337\\nx"' in out
    assert "p0 rejected by alice\\r\\nFAKE-LINE: approved by root" in out
    assert proposal_decided_line(result) == "p0 rejected by alice\\r\\nFAKE-LINE: approved by root"


def test_approve_and_reject_print_the_decision_escaped():
    assert call_decided_line(decided()) == (
        "c0 approved (edited: to\\u202e) by alice\\r\\nFAKE-LINE: approved by root"
    )
    assert call_decided_line(decided(by="zoë 🎉")) == "c0 approved (edited: to\\u202e) by zoë 🎉"


def test_what_waits_is_named_escaped_in_hints_and_errors():
    calls = [held(call_id="c1\u202e", tool="pay\r\n")]
    assert_honest(pointer_to_calls("s1", calls))
    assert "c1\\u202e (pay\\r\\n)" in pointer_to_calls("s1", calls)
    err = not_pending(
        "s1\n", "c9", ToolApprovalList(pending=calls), ProposalList(pending=[proposal("t")])
    )
    message = str(err)
    assert_honest(message)
    assert "c1\\u202e (tool call pay\\r\\n), p1 (proposal)" in message
    assert "in session s1\\n;" in message
