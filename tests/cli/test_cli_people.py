"""One verb for people on the command line: ``approve`` / ``reject`` (``confirm`` as an
alias) decide a held tool call and a proposal alike; ``pending`` lists both; ``status``
shows a session and what waits in it; ``proposals`` and ``tool-calls list`` point at what
waits of the other kind; ``result`` prints as ``send`` does."""

from __future__ import annotations

import json

from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from tests.cli.test_cli_proposals import invoke
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings

PAY = {"amount": 250, "to": "acme"}


async def test_approve_and_reject_decide_held_calls_and_proposals_alike(
    loop_worker, scripted_llm, temporal_env, ws
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("pay", PAY, "c1"),
                ("pay", {"amount": 5, "to": "bob"}, "c2"),
                (
                    "facts_propose",
                    {"changes": [{"op": "add", "path": "/title", "value": "T"}]},
                    "c3",
                ),
            ),
            reply.text("Paid one; the title waits."),
        ],
    )
    tools: ToolRegistry = payments.registry().merged(workspace_tools(ws))
    async with loop_worker(tools) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        sent = await invoke(temporal_env, "send", sid, "pay and title", "--message-id", "m1")
        listed = await invoke(temporal_env, "pending", sid)
        as_json = json.loads((await invoke(temporal_env, "pending", sid, "--json")).stdout)
        status = await invoke(temporal_env, "status", sid)
        nowhere = await invoke(temporal_env, "approve", sid, "c9", "--as", "alice")
        approved = await invoke(temporal_env, "approve", sid, "c1", "--as", "alice")
        rejected = await invoke(
            temporal_env, "reject", sid, "c2", "--as", "bob", "--comment", "not bob"
        )
        again = await invoke(temporal_env, "confirm", sid, "c2", "--as", "bob")
        calls_left = await invoke(temporal_env, "tool-calls", "list", sid)
        [proposal] = as_json["sessions"][0]["proposals"]
        pid = proposal["proposal_id"]
        committed = await invoke(temporal_env, "confirm", sid, pid, "--as", "carol")
        result = await invoke(temporal_env, "result", sid, "m1", "--timeout", "60")
        nothing = await invoke(temporal_env, "pending", sid)
    assert sent.exit_code == 0 and "status awaiting_approval" in sent.output
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert lines[0] == f"{sid}: 3 waiting"
    assert any(line.split()[:3] == ["c1", "tool", "call"] for line in lines)
    assert any(line.split()[:2] == [pid, "proposal"] for line in lines)
    assert f"durable-loop approve {sid} ID --as YOU" in lines[-1]
    assert [c["call_id"] for c in as_json["sessions"][0]["tool_calls"]] == ["c1", "c2"]
    assert status.exit_code == 0 and f"session {sid}: awaiting_approval" in status.stdout
    assert "waiting for a person: 3" in status.stdout and "c2" in status.stdout
    assert nowhere.exit_code == 2 and "NOT_PENDING" in nowhere.stderr
    assert "c1 (tool call pay), c2 (tool call pay)" in nowhere.stderr and pid in nowhere.stderr
    assert approved.exit_code == 0 and approved.stdout.strip() == "c1 approved by alice"
    assert rejected.exit_code == 0 and rejected.stdout.strip() == "c2 rejected by bob"
    assert (
        again.exit_code == 2 and "ALREADY_DECIDED: tool call c2 is already rejected" in again.stderr
    )
    assert calls_left.stdout.startswith("no tool calls wait for approval, but 1 proposal(s)")
    assert committed.exit_code == 0, committed.output
    assert committed.stdout.strip() == f"{pid} committed by carol (facts version 1)"
    assert result.exit_code == 0 and result.stdout == "Paid one; the title waits.\n"
    assert "pay [c2] TOOL_CALL_REJECTED" in result.stderr
    assert nothing.stdout.strip() == f"nothing waits for a person in session {sid}"
    assert [(a, to) for a, to, _ in payments.made] == [(250, "acme")]
    assert (await ws.snapshot(sid)).facts == {"title": "T"}


async def test_proposals_points_at_the_tool_calls_that_wait(
    loop_worker, scripted_llm, temporal_env, ws
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_calls(("pay", PAY, "call_1_0")), reply.text("ok")])
    async with loop_worker(Payments().registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay")
        listed = await invoke(temporal_env, "proposals", sid)
        edited = await invoke(
            temporal_env, "approve", sid, "call_1_0", "--as", "al", "--args", '{"amount": 1}'
        )
        proposal_args = await invoke(temporal_env, "approve", sid, "p-1", "--as", "al")
    assert listed.exit_code == 0
    assert listed.stdout.strip() == (
        "no pending proposals, but 1 tool call(s) wait for approval: call_1_0 (pay); "
        f"see `durable-loop pending {sid}`"
    )
    assert edited.exit_code == 2 and "INVALID_ARGS" in edited.stderr  # "to" is required
    assert proposal_args.exit_code == 2 and "NOT_PENDING" in proposal_args.stderr


async def test_status_of_an_idle_session_and_of_none(loop_worker, scripted_llm, temporal_env):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("hi")])
    async with loop_worker() as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "hello")
        status = await invoke(temporal_env, "status", sid)
        as_json = json.loads((await invoke(temporal_env, "status", sid, "--json")).stdout)
        missing = await invoke(temporal_env, "status", unique("nosession"))
    assert status.exit_code == 0, status.output
    assert status.stdout.splitlines()[0] == f"session {sid}: idle · model {model}"
    assert "messages 1 done, 0 queued" in status.stdout
    assert status.stdout.splitlines()[-1] == "nothing waits for a person"
    assert as_json["status"]["state"] == "idle" and as_json["waiting"]["tool_calls"] == []
    assert missing.exit_code == 2 and "SESSION_NOT_FOUND" in missing.stderr


async def test_result_shows_what_it_waits_for_then_prints_as_send(
    loop_worker, scripted_llm, temporal_env
):
    import asyncio

    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_calls(("pay", PAY, "c1")), reply.text("Paid acme.")])
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay", message_id="m1")
        waiting = asyncio.create_task(invoke(temporal_env, "result", sid, "m1", "--timeout", "60"))
        await asyncio.sleep(4)  # past the notice
        assert not waiting.done()
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        result = await waiting
        timed_out = await invoke(temporal_env, "result", sid, "m-none", "--timeout", "1")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Paid acme.\n"
    assert f"waiting: session {sid} waits for a person" in result.stderr
    assert "pay [c1]" in result.stderr and "  · c1  pay  approved by alice" in result.stderr
    assert "status completed" in result.stderr
    assert timed_out.exit_code == 2 and "UNKNOWN_MESSAGE" in timed_out.stderr


def test_a_missing_namespace_is_not_read_as_a_missing_session():
    """The short commands skip the namespace round trip: the call's own NOT_FOUND names
    the namespace, and stays NAMESPACE_NOT_FOUND."""
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.commands.session_rpc import known_failure
    from durable_loop.cli.errors import explain
    from durable_loop.core.errors import ErrorCode

    namespace = RPCError("Namespace nosuch is not found.", RPCStatusCode.NOT_FOUND, b"")
    session = RPCError("workflow not found for ID: session-s1", RPCStatusCode.NOT_FOUND, b"")
    mapped = known_failure(namespace, "s1", ErrorCode.QUERY_FAILED)
    assert mapped is namespace and (explain(mapped) or "").startswith("NAMESPACE_NOT_FOUND")
    assert explain(known_failure(session, "s1", ErrorCode.QUERY_FAILED)) == (
        "SESSION_NOT_FOUND: no running session 's1'"
    )


async def test_approve_remember_lets_the_waiting_calls_it_allows_run(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", {"amount": 5, "to": "a"}, "c1"), ("pay", PAY, "c2")),
            reply.text("Paid what was allowed."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await invoke(temporal_env, "send", sid, "pay both", "--message-id", "m1")
        stray = await invoke(temporal_env, "approve", sid, "c1", "--as", "al", "--for", "60")
        bad = await invoke(
            temporal_env, "approve", sid, "c1", "--as", "al", "--remember", "--when", "[1]"
        )
        when = '{"properties": {"amount": {"maximum": 100}}}'
        approved = await invoke(
            temporal_env, "approve", sid, "c1", "--as", "al", "--remember", "--when", when
        )
        listing = await w.sessions.tool_approvals(sid)
        await w.sessions.reject_tool_call(sid, "c2", "al")
        final = await w.sessions.message_result(sid, "m1")
    assert stray.exit_code == 2 and "--for and --when go with --remember" in stray.stderr
    assert bad.exit_code == 2 and "INVALID_JSON" in bad.stderr
    assert approved.exit_code == 0, approved.output
    assert [p.call_id for p in listing.pending] == ["c2"]  # 250 is over the condition
    [policy] = listing.policies
    assert (policy.tool, policy.approved_by, policy.expires_at) == ("pay", "al", None)
    assert final.status == "completed" and [a for a, _, _ in payments.made] == [5]
