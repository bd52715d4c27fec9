"""``durable-loop sessions`` lists sessions from visibility; ``durable-loop pending`` with
no session lists what waits for a person in every running session, those that keep no
search attributes too."""

from __future__ import annotations

import json

from durable_loop.client.sessions import SessionClient
from durable_loop.testing import reply
from tests.cli.test_cli_proposals import invoke
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import eventually

PAY = {"amount": 250, "to": "acme"}


async def test_sessions_and_pending_across_sessions(loop_worker, scripted_llm, temporal_env):
    model = unique("m")
    held, idle, plain = unique("held"), unique("idle"), unique("plain")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1")),
            reply.text("hi"),
            reply.tool_calls(("pay", PAY, "c7")),
        ],
    )
    settings = approval_settings(scripted_llm, model, temporal_env)
    async with loop_worker(Payments().registry()) as w:
        visible = SessionClient(w.sessions.client, task_queue=w.task_queue, search_attributes=True)
        w.sessions.started_workflow_ids = visible.started_workflow_ids  # replayed at the end
        await visible.start_and_send(held, settings, "pay")
        await visible.start_and_send(idle, settings, "hello")
        await w.sessions.start_and_send(plain, settings, "pay")  # keeps no search attributes

        async def both_listed():
            found = await invoke(temporal_env, "pending", "--json")
            ids = [s["session_id"] for s in json.loads(found.stdout)["sessions"]]
            return found if {held, plain} <= set(ids) else None

        everywhere = await eventually(both_listed)
        text = await invoke(temporal_env, "pending")
        listed = await eventually(_listing_with(temporal_env, held, idle, plain))
        running = await invoke(temporal_env, "sessions", "--running", "--json")
    waiting = {s["session_id"]: s for s in json.loads(everywhere.stdout)["sessions"]}
    assert idle not in waiting
    assert [c["call_id"] for c in waiting[held]["tool_calls"]] == ["c1"]
    assert [c["call_id"] for c in waiting[plain]["tool_calls"]] == ["c7"]
    assert f"{held}: 1 waiting" in text.stdout and "decide: durable-loop approve" in text.stdout
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert listed.stdout.splitlines()[0].split() == [
        "SESSION",
        "STATUS",
        "LAST",
        "ACTIVITY",
        "WAITING",
        "MODEL",
    ]
    assert rows[held][1] == "awaiting_approval" and rows[held][-2:] == ["1", model]
    assert rows[idle][1] == "idle" and rows[idle][-2:] == ["0", model]
    assert rows[plain][1] == "running" and rows[plain][-2:] == ["-", "-"]  # no attributes
    assert rows[held][3] == "ago"  # "3s ago"
    assert {held, idle, plain} <= {s["session_id"] for s in json.loads(running.stdout)["sessions"]}


def _listing_with(env, *ids: str):
    async def probe():
        found = await invoke(env, "sessions")
        listed = {line.split()[0]: line for line in found.stdout.splitlines()[1:]}
        if all(i in listed for i in ids) and "awaiting_approval" in listed[ids[0]]:
            return found
        return None

    return probe
