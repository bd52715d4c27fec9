"""Replay evals beyond the first message: each message re-asked after the recorded
conversation before it (a fork of the recorded session), the tools offered with the
schemas --tools gives (the others with the schemas the session recorded), new calls run
with --run-tools, and a judge model's verdict."""

from __future__ import annotations

import json
from typing import Any

from pydantic import JsonValue

from durable_loop.client.session_data import SessionData
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.replay.judge import Judge, verdict_of
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.run import load_recorded, replay_sessions, replay_settings
from durable_loop.evals.replay.tools import NOT_RECORDED, ReplayTools
from durable_loop.testing import reply
from durable_loop.worker.builder import new_http_client
from tests.conftest import settings_for, unique

CALC_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"expression": {"type": "string", "description": "e.g. 3+4"}},
    "required": ["expression"],
}


def calculator(ran: list[str]) -> ToolRegistry:
    async def calc(ctx: ToolContext, expression: str) -> JsonValue:
        ran.append(expression)
        left, right = expression.split("+")
        return {"value": int(left) + int(right)}

    registry = ToolRegistry()
    registry.add(
        ToolSpec(name="calc", description="Add two numbers.", parameters=CALC_SCHEMA), calc
    )
    return registry


def with_notes(registry: ToolRegistry) -> ToolRegistry:
    async def note(ctx: ToolContext, text: str) -> JsonValue:
        return {"saved": text}

    registry.add(ToolSpec(name="note", parameters={"type": "object"}), note)
    return registry


def texts(request_messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], m.get("content") or "") for m in request_messages if m["role"] != "system"]


async def test_each_message_is_replayed_after_the_recorded_conversation_before_it(
    loop_worker, scripted_llm, tmp_path
):
    recorded_model, sid = unique("recorded"), unique("s")
    scripted_llm.script(
        recorded_model,
        [
            reply.tool_call("calc", {"expression": "3+4"}),
            reply.text("The result is 7."),
            reply.text("7 times two is 14."),
            reply.tool_call("note", {"text": "14"}),
            reply.text("Noted."),
        ],
    )
    ran: list[str] = []
    async with loop_worker(with_notes(calculator(ran))) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, recorded_model))
        await w.sessions.send(sid, "what is 3+4?")
        await w.sessions.send(sid, "what was the result times two?")
        await w.sessions.send(sid, "note it down")
        recorded = [await load_recorded(SessionData(w.sessions, w.store.db), sid)]
    assert ran == ["3+4"]
    assert [m.fork_turn for m in recorded[0][0].messages] == [0, 2, 3]

    new_model, judge_model = unique("new"), unique("judge")
    scripted_llm.script(
        new_model,
        [
            reply.tool_call("calc", {"expression": "3+4"}),
            reply.text("The result is 7."),
            reply.tool_call("calc", {"expression": "7+7"}),  # new: runs (--run-tools)
            reply.text("It is 14."),
            reply.tool_call("note", {"text": "fourteen"}),  # new, not given: not run
            reply.text("Noted."),
        ],
    )
    scripted_llm.script(judge_model, [reply.text("SAME"), reply.text("Same."), reply.text("?")])
    tools = ReplayTools.of([s for s, _ in recorded], calculator(ran), run_new=True)
    http = new_http_client()
    try:
        judge = Judge(settings_for(scripted_llm, judge_model).llm, http, {})
        async with loop_worker(tools.registry()) as w:
            results = await replay_sessions(
                w.sessions, w.store.db, tools, recorded, replay_settings(new_model), judge
            )
    finally:
        await http.aclose()

    asked = scripted_llm.requests(new_model)
    assert texts(asked[0].messages) == [("user", "what is 3+4?")]
    second = texts(asked[2].messages)  # the first request of message 2's replay
    assert second[0] == ("user", "what is 3+4?")
    assert second[2][0] == "tool" and "7" in second[2][1]  # the recorded result
    assert ("assistant", "The result is 7.") in second
    assert second[-1] == ("user", "what was the result times two?")
    third = texts(asked[4].messages)
    assert ("assistant", "7 times two is 14.") in third  # the original's answer, not the replay's
    assert ("assistant", "It is 14.") not in third

    offered = {t["function"]["name"]: t["function"] for t in asked[0].body["tools"]}
    assert offered["calc"]["parameters"] == CALC_SCHEMA
    assert offered["calc"]["description"] == "Add two numbers."
    assert offered["note"]["parameters"] == {"type": "object"}  # as recorded

    assert ran == ["3+4", "7+7"]  # the served call did not run, the new calc call did
    assert [(r.served, r.new, r.new_ran) for r in results] == [(1, 0, 0), (0, 1, 1), (0, 1, 0)]
    assert results[1].replay.calls[0].result == {"value": 14}
    assert results[2].replay.calls[0].result == NOT_RECORDED
    assert [r.same_answer for r in results] == [True, False, True]
    assert [r.judge for r in results] == ["same", "same", "unsure"]
    judged = scripted_llm.requests(judge_model)[1].messages[-1]["content"]
    assert "7 times two is 14." in judged and "It is 14." in judged

    directory = write_replay_report(
        tmp_path, results, tool_schemas=tools.schema_source, names_only=tools.names_only
    )
    totals = json.loads((directory / "replay.json").read_text())["totals"]
    assert (totals["calls_new_ran"], totals["calls_new_not_run"]) == (1, 1)
    assert totals["judge"] == {"same": 2, "different": 0, "unsure": 1}
    assert json.loads((directory / "replay.json").read_text())["tool_schemas"] == (
        "given and recorded"
    )
    assert "offered by name only" not in (directory / "report.md").read_text()


def test_the_judge_reads_its_verdict_from_the_first_words():
    assert verdict_of("SAME") == "same"
    assert verdict_of("Different: B adds a date") == "different"
    assert verdict_of("I think they are the same") == "unsure"
    assert verdict_of("") == "unsure"
