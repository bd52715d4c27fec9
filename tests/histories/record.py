"""Record the workflow histories checked in next to this file.

``tests/test_replay.py`` replays every ``*.json`` here against the current workflow code,
so a change that would break running sessions fails CI. Regenerate them only on purpose
(a deliberate, versioned workflow change), from the repository root::

    .venv/bin/python -m tests.histories.record            # all
    .venv/bin/python -m tests.histories.record cancelled  # a new scenario only

Each scenario runs on a fresh time-skipping server with the scripted LLM endpoint and
writes one file per workflow run (``<scenario>.run<N>.json``, Temporal's JSON history
format, also readable by ``temporal workflow show --input``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from temporalio.client import WorkflowHistory

from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.approvals import ApprovalSettings
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.testing.history import EventType, events_of
from durable_loop.testing.pytest_plugin import start_test_environment
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from tests.conftest import settings_for
from tests.histories.recovery_scenarios import (
    continue_after_repeat,
    continue_after_repeat_narrowed,
    done_at_once,
    recoveries,
    referred_tool_made_up,
    requested_tool,
    routed_tool,
    routed_tool_made_up,
    routed_tool_not_named,
    router_clarify,
    unasked_call,
    unknown_tool_repeat,
    unsaid_values,
)
from tests.workflows.toolkit import ToolLog, recording_tools

HERE = Path(__file__).parent
Scenario = Callable[[SessionClient, ScriptedLLM], Awaitable[str]]


async def happy_path(sessions: SessionClient, llm: ScriptedLLM) -> str:
    sid, model = "recorded-happy", "recorded-happy-model"
    llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    await sessions.start(sid, settings_for(llm, model))
    await sessions.send(sid, "what is 2+3?", message_id="m1")
    await sessions.close(sid)
    return sid


async def run_start_patches(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """A run under patch ``patches-at-run-start``: the patches a run could first ask right
    after a local activity are recorded in its first workflow task; ``finalize-when-done``
    then answers from there after the addition."""
    sid, model = "recorded-run-start-patches", "recorded-run-start-patches-model"
    llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    runtime = RuntimeConfig(recoveries=["finalize_when_done"])
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "what is 2+3?", message_id="m1")
    await sessions.close(sid)
    return sid


async def parallel_calls(sessions: SessionClient, llm: ScriptedLLM) -> str:
    sid, model = "recorded-parallel", "recorded-parallel-model"
    llm.script(
        model,
        [
            reply.tool_calls(
                ("nap", {"seconds": 0.3, "label": "a"}),
                ("add", {"a": 1, "b": 2}),
                ("missing_tool", {}),
                ("add", "{broken"),
            ),
            reply.tool_call("add", {"b": 2, "a": 1}, "repeat"),
            reply.text(""),
            reply.text("a, 3"),
        ],
    )
    await sessions.start(sid, settings_for(llm, model))
    await sessions.send(sid, "nap and add", message_id="m1")
    await sessions.close(sid)
    return sid


async def continue_as_new(sessions: SessionClient, llm: ScriptedLLM) -> str:
    sid, model = "recorded-continue-as-new", "recorded-can-model"

    def answer(request):  # type: ignore[no-untyped-def]
        if request.messages[-1]["role"] == "user":
            return reply.tool_call("add", {"a": len(request.messages), "b": 1})
        return reply.text(f"after {len(request.messages)} messages")

    llm.script(model, [], then=answer)
    runtime = RuntimeConfig(continue_as_new_after_events=200)
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    for index in range(12):
        await sessions.send(sid, f"message {index}", message_id=f"m{index}")
    await sessions.close(sid)
    return sid


async def tool_approvals(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """Two gated calls held in one turn: one confirmed with an edit (after a refused
    Signal), one rejected; the message resumes and ends."""
    sid, model = "recorded-approvals", "recorded-approvals-model"
    llm.script(
        model,
        [
            reply.tool_calls(("add", {"a": 1, "b": 2}, "c1"), ("add", {"a": 5, "b": 5}, "c2")),
            reply.text("3 only"),
        ],
    )
    settings = settings_for(llm, model).model_copy(
        update={"approvals": ApprovalSettings(tools=["ad*"])}
    )
    await sessions.start(sid, settings)
    first = await sessions.send(sid, "add both", message_id="m1")
    c1, c2 = first.pending_approvals
    forged = c1.decision("confirm", "mallory").model_copy(update={"fingerprint": "0" * 64})
    await sessions.tool_calls.signal(sid, forged)
    await sessions.decide_tool_call(
        sid, c1.decision("confirm", "alice", arguments={"a": 1, "b": 3})
    )
    await sessions.decide_tool_call(sid, c2.decision("reject", "bob", comment="not now"))
    await sessions.message_result(sid, "m1")
    await sessions.close(sid)
    return sid


async def cancelled(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """A tool turn cancelled (cancel_message), then a slow reply interrupted by a new message."""
    sid, model = "recorded-cancelled", "recorded-cancelled-model"
    llm.script(
        model,
        [
            reply.tool_calls(("nap", {"seconds": 30, "label": "a"}), ("add", {"a": 1, "b": 2})),
            reply.slow(reply.text("too late"), 30),
            reply.text("steered"),
        ],
    )
    await sessions.start(sid, settings_for(llm, model))
    first = asyncio.create_task(sessions.send(sid, "nap and add", message_id="m1"))
    while not any(e.tool_names for e in (await sessions.tail(sid)).entries):
        await asyncio.sleep(0.05)  # the model called the tools
    await asyncio.sleep(0.5)  # nap runs
    await sessions.cancel(sid, "m1")
    await first
    second = asyncio.create_task(sessions.send(sid, "an essay", message_id="m2"))
    while (await sessions.status(sid)).state != "running":
        await asyncio.sleep(0.05)
    await sessions.send(sid, "a haiku", message_id="m3", interrupt=True)
    await second
    await sessions.close(sid)
    return sid


async def typed_output(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """A message with an output_schema: a tool call, an answer that is not valid for the
    schema (sent back with the errors), a valid one; then a plain message."""
    sid, model = "recorded-typed", "recorded-typed-model"
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 2, "b": 3}),
            reply.text('{"sum": "five"}'),
            reply.text('{"sum": 5}'),
            reply.text("plain"),
        ],
    )
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    await sessions.start(sid, settings_for(llm, model))
    await sessions.send(sid, "what is 2+3?", message_id="m1", output_schema=schema)
    await sessions.send(sid, "thanks", message_id="m2")
    await sessions.close(sid)
    return sid


async def sub_agent(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """The model delegates to a sub-agent (on the same scripted model), which calls a tool;
    the parent's history records the child's start and completion, the child's its turns."""
    sid, model = "recorded-sub-agent", "recorded-sub-agent-model"
    llm.script(
        model,
        [
            reply.tool_call("helper", {"task": "add 2 and 3"}, "h1"),
            reply.tool_call("add", {"a": 2, "b": 3}, "a1"),
            reply.text("5"),
            reply.text("the helper says 5"),
        ],
    )
    await sessions.start(sid, settings_for(llm, model))
    await sessions.send(sid, "ask the helper", message_id="m1")
    await sessions.close(sid)
    return sid


SCENARIOS: dict[str, Scenario] = {
    "happy_path": happy_path,
    "parallel_calls": parallel_calls,
    "continue_as_new": continue_as_new,
    "tool_approvals": tool_approvals,
    "cancelled": cancelled,
    "typed_output": typed_output,
    "sub_agent": sub_agent,
    "recoveries": recoveries,
    "requested_tool": requested_tool,
    "routed_tool": routed_tool,
    "routed_tool_not_named": routed_tool_not_named,
    "routed_tool_made_up": routed_tool_made_up,
    "referred_tool_made_up": referred_tool_made_up,
    "unasked_call": unasked_call,
    "unsaid_values": unsaid_values,
    "done_at_once": done_at_once,
    "unknown_tool_repeat": unknown_tool_repeat,
    "continue_after_repeat": continue_after_repeat,
    "continue_after_repeat_narrowed": continue_after_repeat_narrowed,
    "router_clarify": router_clarify,
    "run_start_patches": run_start_patches,
}


def recording_registry() -> ToolRegistry:
    registry = recording_tools(ToolLog())
    registry.add_sub_agent(SubAgentConfig(name="helper", description="Adds", tools=["add"]))
    return registry


def sub_agent_workflow_ids(history: WorkflowHistory) -> list[str]:
    started = events_of(history, EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
    return [
        e.start_child_workflow_execution_initiated_event_attributes.workflow_id for e in started
    ]


async def record(target: Path = HERE, only: list[str] | None = None) -> list[Path]:
    """Record every scenario (or those named in ``only``) into ``target``."""
    written: list[Path] = []
    env = await start_test_environment()
    try:
        with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as tmp:
            store = open_store(StoreConfig.sqlite_file(Path(tmp) / "store.db"))
            http = new_http_client()
            deps = WorkerDeps(store=store, registry=recording_registry(), http=http)
            worker = build_worker(env.client, deps, task_queue="recording")
            sessions = SessionClient(env.client, task_queue="recording")
            try:
                async with worker:
                    for name, scenario in SCENARIOS.items():
                        if only is not None and name not in only:
                            continue
                        sid = await scenario(sessions, llm)
                        workflow_id = names.session_workflow_id(sid)
                        await env.client.get_workflow_handle(workflow_id).result()
                        runs = await fetch_histories(env.client, workflow_id)
                        labelled = [(f"{name}.run{i}", h) for i, h in enumerate(runs)]
                        for parent in runs:
                            for child_number, child in enumerate(sub_agent_workflow_ids(parent)):
                                child_runs = await fetch_histories(env.client, child)
                                labelled += [
                                    (f"{name}.child{child_number}.run{i}", h)
                                    for i, h in enumerate(child_runs)
                                ]
                        for label, history in labelled:
                            path = target / f"{label}.json"
                            body = json.dumps(history.to_json_dict(), indent=1) + "\n"
                            path.write_text(body)
                            written.append(path)
            finally:
                await http.aclose()
                await store.close()
    finally:
        await env.shutdown()
    return written


def main() -> None:
    only = sys.argv[1:]
    for old in HERE.glob("*.json"):
        if not only or old.name.split(".")[0] in only:
            old.unlink()
    for path in asyncio.run(record(only=only)):
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
