"""The trace shows hidden characters as escapes (issue 28): an approver's CR/LF cannot
print a line of its own, the model's U+202E cannot reorder a call's arguments."""

from __future__ import annotations

import unicodedata

from durable_loop.client.trace.entries import (
    ProposalDecisionEntry,
    RefusalEntry,
    ToolCallDecisionEntry,
)
from durable_loop.client.trace.models import (
    CallArguments,
    CallRow,
    MessageRow,
    RunInfo,
    Trace,
    TurnRow,
)
from durable_loop.client.trace.render_entries import entry_text
from durable_loop.core.errors import CodedError
from tests.client.trace.kit import rendered

FORGED = "alice\r\nFAKE-LINE: approved by root"
FORGED_SHOWN = "alice\\r\\nFAKE-LINE: approved by root"


def assert_honest(text: str) -> None:
    assert not any(line.lstrip(" »").startswith("FAKE-LINE") for line in text.split("\n"))
    hidden = {
        f"U+{ord(c):04X}"
        for c in text
        if c != "\n" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp", "Cs"}
    }
    assert not hidden, f"raw hidden characters: {hidden}"


def test_decision_entries_show_escapes():
    tool = ToolCallDecisionEntry(
        via="update",
        name="decide_tool_call",
        call_id="c1\u202e",
        tool="pay",
        outcome="approved_with_edits",
        by=FORGED,
        comment="ok\u2066\nFAKE-LINE: comment",
        edited_fields=["to"],
        arguments={"amount": 200, "to": "acme\u202e1337", "city": "東京"},
    )
    proposal = ProposalDecisionEntry(
        via="signal",
        name="proposal_decision",
        proposal_id="p1",
        verdict="reject",
        status="rejected",
        by=FORGED,
        comment="\u202eno",
    )
    refusal = RefusalEntry(
        via="signal",
        name="tool_call_decision",
        target="c2\u200b",
        by=FORGED,
        error=CodedError(code="NOT_PENDING", message="c2\u200b\nFAKE-LINE: is not pending"),
    )
    lines = [entry_text(e).plain for e in (tool, proposal, refusal)]
    for line in lines:
        assert_honest(line)
    assert lines[0].startswith(f"» {FORGED_SHOWN} approved pay c1\\u202e with edits (to)")
    assert ' — "ok\\u2066\\nFAKE-LINE: comment"' in lines[0]
    assert '; runs with {"amount": 200, "to": "acme\\u202e1337", "city": "東京"}' in lines[0]
    assert lines[1].startswith(f"» {FORGED_SHOWN} rejected proposal p1")
    assert lines[1].endswith(' — "\\u202eno"  [signal proposal_decision]')
    assert lines[2].startswith(f"» refused {FORGED_SHOWN}'s decision on c2\\u200b: NOT_PENDING")
    assert "c2\\u200b\\nFAKE-LINE: is not pending" in lines[2]


def test_a_calls_name_id_and_arguments_show_escapes():
    raw = '{"to": "acme\u202e1337",\n "memo": "\x1b[2Jcafé"}'
    call = CallRow(
        call_id="c1\u2067",
        name="pay\u200b",
        ok=True,
        executed=True,
        arguments=CallArguments(text=raw, chars=len(raw)),
        sub_agent_session="child\r\nFAKE-LINE: sub",
    )
    turn = TurnRow(turn=1, run_index=0, assistant_seq=2, model="m", calls=[call])
    trace = Trace(
        session_id="s1",
        workflow_id="session-s1",
        namespace="default",
        runs=[RunInfo(run_index=0, run_id="r" * 36, event_count=10, history_bytes=100, turns=1)],
        turns=[turn],
        messages=2,
        user_messages=1,
        by_message=[MessageRow(message_id="m1", status="completed", session_turns=[1])],
    )
    text = rendered(trace)
    assert_honest(text)
    assert "pay\\u200b c1\\u2067 ok" in text
    assert '{"to": "acme\\u202e1337", "memo": "\\u001b[2Jcafé"}' in text
    assert "sub-agent session child\\r\\nFAKE-LINE: sub" in text
