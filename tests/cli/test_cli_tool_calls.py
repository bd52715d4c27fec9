"""`durable-loop tool-calls list | approve | edit | reject` and `durable-loop result`."""

from __future__ import annotations

import json

from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings

PAY = {"amount": 250, "to": "acme"}


async def test_list_edit_reject_and_wait_from_the_command_line(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 5, "to": "bob"}, "c2")),
            reply.text("One paid, one not."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        sent = await invoke(temporal_env, "send", sid, "pay both", "--message-id", "m1")
        listed = await invoke(temporal_env, "tool-calls", "list", sid, "--json")
        text = await invoke(temporal_env, "tool-calls", "list", sid)
        bad_edit = await invoke(
            temporal_env, "tool-calls", "edit", sid, "c1", "--as", "eve", "--args", '{"to": 1}'
        )
        edited = await invoke(
            temporal_env,
            "tool-calls",
            "edit",
            sid,
            "c1",
            "--as",
            "alice",
            "--args",
            '{"amount": 200, "to": "acme"}',
        )
        rejected = await invoke(
            temporal_env, "tool-calls", "reject", sid, "c2", "--as", "bob", "--comment", "no"
        )
        again = await invoke(temporal_env, "tool-calls", "approve", sid, "c2", "--as", "bob")
        unknown = await invoke(temporal_env, "tool-calls", "confirm", sid, "c9", "--as", "bob")
        final = await invoke(temporal_env, "result", sid, "m1", "--json")
        human = await invoke(temporal_env, "result", sid, "m1")
        missing = await invoke(temporal_env, "result", sid, "m-nope")
    assert sent.exit_code == 0, sent.output
    assert "status awaiting_approval" in sent.output
    assert "waits for approval: pay [c1]" in sent.output and "[c2]" in sent.output
    assert [p["call_id"] for p in json.loads(listed.stdout)["pending"]] == ["c1", "c2"]
    assert '"amount": 250' in text.stdout and "fingerprint:" in text.stdout
    assert bad_edit.exit_code == 2 and "INVALID_ARGS" in bad_edit.output
    assert edited.exit_code == 0 and "c1 approved (edited: amount) by alice" in edited.stdout
    assert rejected.exit_code == 0 and "c2 rejected by bob" in rejected.stdout
    assert again.exit_code == 2 and "ALREADY_DECIDED" in again.output
    assert unknown.exit_code == 2 and "UNKNOWN_TOOL_CALL" in unknown.output
    assert final.exit_code == 0, final.output
    assert json.loads(final.stdout)["reply"] == "One paid, one not."
    assert human.exit_code == 0 and human.stdout == "One paid, one not.\n"  # as send prints
    assert "status completed" in human.stderr and "pay [c1] ok" in human.stderr
    assert missing.exit_code == 2 and "UNKNOWN_MESSAGE" in missing.output
    assert [(a, to) for a, to, _ in payments.made] == [(200, "acme")]
