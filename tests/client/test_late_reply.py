"""What a late reply waits for, in words (``MessageWait``); the server-side probe runs in
tests/cli/test_cli_send_waiting.py."""

from __future__ import annotations

from datetime import UTC, datetime

from durable_loop.client.late_reply import MessageWait
from durable_loop.core.approvals import PendingToolCall
from durable_loop.core.contracts import SessionStatus
from durable_loop.core.messages import Usage

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def status(state: str, queued: int = 0) -> SessionStatus:
    return SessionStatus(
        session_id="s1", state=state, model="m", messages_done=1, turns_total=1,  # type: ignore[arg-type]
        queued_messages=queued, next_seq=4, run_index=0, usage=Usage(),
    )  # fmt: skip


def held(call_id: str, session_id: str = "s1") -> PendingToolCall:
    return PendingToolCall(
        call_id=call_id, tool="pay", arguments={}, fingerprint="f", session_id=session_id,
        message_id="m1", turn=1, assistant_seq=2, call_index=0, result_seq=3,
        created_at=NOW, expires_at=NOW,
    )  # fmt: skip


def test_a_message_behind_held_calls():
    calls = [held(f"c{i}") for i in range(1, 8)]
    wait = MessageWait(
        "s1", "m2", task_queue="q", pollers=1, status=status("awaiting_approval", 2), held=calls
    )
    assert wait.waits_for_person and wait.held_up
    assert wait.summary() == (
        "session s1 waits for a person: 7 held tool call(s): pay [c1], pay [c2], pay [c3], "
        "pay [c4], pay [c5] and 2 more; message m2 is queued behind them with 1 other message(s)"
    )
    assert wait.text().endswith("then read the reply later with `durable-loop result s1 m2`")


def test_a_sub_agents_call_is_named_with_its_session():
    wait = MessageWait(
        "s1",
        "m2",
        task_queue="q",
        status=status("awaiting_approval", 1),
        held=[held("c1", "s1--r1-2")],
    )
    assert "pay [c1] in sub-agent s1--r1-2; message m2 is queued behind them" in wait.summary()


def test_no_worker_a_closed_session_and_a_busy_one():
    no_worker = MessageWait("s1", "m2", task_queue="q", pollers=0)
    assert no_worker.held_up and "no worker answers session s1 (task queue 'q')" in no_worker.text()
    assert "start one with `durable-loop worker`" in no_worker.text()
    closed = MessageWait("s1", "m2", closed="TERMINATED")
    assert closed.text() == "session s1 is no longer running (terminated)"
    busy = MessageWait("s1", "m2", task_queue="q", pollers=1, status=status("running", 3))
    assert not busy.held_up
    assert busy.text().startswith("session s1 is still working on a message (3 message(s) queued)")
