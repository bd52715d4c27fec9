"""Named argument recoveries: a refused call is re-issued with arguments one focused,
tool-less request repaired (shorten_oversized_arguments, repair_invalid_arguments)."""

from __future__ import annotations

import json
import re

from durable_loop.core.argument_repair import shorten_max_tokens
from durable_loop.core.config import RuntimeConfig, ToolUseMode
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.reply_meta import LlmReplyMeta
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog

LONG = "The quarterly report covers revenue, costs and hiring plans in detail. " * 6
SHORT = "Quarterly report: revenue, costs, hiring."
LIMIT = 200


def note_tools(log: ToolLog) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def save_note(title: str, text: str, ctx: ToolContext) -> str:
        """Save a note."""
        log.start("save_note", {"title": title, "text": text}, ctx)
        return f"saved {title!r} ({len(text)} chars)"

    @registry.tool()
    def add(a: int, b: int, ctx: ToolContext) -> int:
        """Add two integers."""
        log.start("add", {"a": a, "b": b}, ctx)
        return a + b

    return registry


async def run(loop_worker, scripted_llm, steps, runtime, text="please"):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, steps)
    async with loop_worker(note_tools(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, text)
        stored = await w.store.read(sid)
    return result, scripted_llm.requests(model), log, stored


SHORTEN = RuntimeConfig(max_tool_args_bytes=LIMIT, shorten_oversized_arguments=True)
OVERSIZED = reply.tool_call("save_note", {"title": "q3", "text": LONG})


async def test_oversized_arguments_are_shortened_and_the_call_reissued(loop_worker, scripted_llm):
    result, requests, log, stored = await run(
        loop_worker,
        scripted_llm,
        [OVERSIZED, reply.text(f'"{SHORT}"'), reply.text("Saved the note q3.")],
        SHORTEN,
    )
    assert result.status == "completed" and result.reply == "Saved the note q3."
    assert result.recoveries == ["shorten_oversized_arguments"]
    assert result.usage.total_tokens == 15 * len(requests) == 45
    assert [(t.name, t.ok, t.error_codes) for t in result.tool_calls] == [
        ("save_note", False, ["ARGUMENTS_TOO_LARGE"]),
        ("save_note", True, []),
    ]
    assert log.executions[0].args == {"title": "q3", "text": SHORT}

    focused = requests[1]
    assert "tools" not in focused.body
    assert [m["role"] for m in focused.messages] == ["system", "user"]
    assert LONG.strip() in focused.messages[1]["content"]
    prompt = focused.messages[1]["content"]
    assert "at most" in prompt and "q3" not in prompt  # only the oversized value
    budget = int(re.search(r"at most (\d+) characters", prompt).group(1))
    assert focused.body["max_tokens"] == shorten_max_tokens(budget, None)

    repaired = [s for s in stored if s.message.tool_calls and s.message.synthetic]
    assert len(repaired) == 1
    meta = repaired[0].meta_as(LlmReplyMeta)
    original = stored[1].message.tool_calls[0]
    assert meta.repair == "shorten_oversized_arguments" and meta.repair_of == original.id
    assert repaired[0].message.tool_calls[0].id == f"{original.id}-repair"
    assert json.loads(repaired[0].message.tool_calls[0].arguments)["text"] == SHORT
    # The next turn's request pairs both calls with their results.
    roles = [m["role"] for m in requests[2].messages]
    assert roles[-4:] == ["assistant", "tool", "assistant", "tool"]


async def test_a_shortening_that_is_still_too_large_is_refused_once_more(loop_worker, scripted_llm):
    result, requests, log, _ = await run(
        loop_worker,
        scripted_llm,
        [OVERSIZED, reply.text(LONG + " and more"), reply.text("I could not save it.")],
        SHORTEN.model_copy(update={"tool_use_mode": ToolUseMode.ENFORCED}),
    )
    assert result.recoveries == ["shorten_oversized_arguments"]
    assert [t.error_codes for t in result.tool_calls] == [
        ["ARGUMENTS_TOO_LARGE"],
        ["ARGUMENTS_TOO_LARGE"],
    ]
    assert log.executions == [] and len(requests) == 3
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "TOOL_ERROR"


async def test_invalid_arguments_are_repaired_from_the_schema_and_the_error(
    loop_worker, scripted_llm
):
    result, requests, log, _ = await run(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": "two", "b": 2}),
            reply.text('Here you go:\n```json\n{"a": 2, "b": 2}\n```'),
            reply.text("2 + 2 is 4."),
        ],
        RuntimeConfig(repair_invalid_arguments=True),
    )
    assert result.status == "completed" and result.reply == "2 + 2 is 4."
    assert result.recoveries == ["repair_invalid_arguments"]
    assert [(t.ok, t.error_codes) for t in result.tool_calls] == [
        (False, ["INVALID_ARGS"]),
        (True, []),
    ]
    assert log.executions[0].args == {"a": 2, "b": 2}
    prompt = requests[1].messages[-1]["content"]
    assert "tools" not in requests[1].body
    assert '"integer"' in prompt and "INVALID_ARGS" in prompt and '"two"' in prompt


async def test_a_repaired_call_that_carries_the_request_is_followed_by_the_answer_request(
    loop_worker, scripted_llm
):
    """finalize_when_done judges the repaired call as any other: the refused call it
    replaces carries nothing, the repaired one the whole request."""
    result, requests, log, _ = await run(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": "nine", "b": 5}),
            reply.text('{"a": 9, "b": 5}'),
            reply.text("9 + 5 is 14."),
        ],
        RuntimeConfig(repair_invalid_arguments=True, recoveries=["finalize_when_done"]),
        text="add 9 and 5",
    )
    assert result.status == "completed" and result.reply == "9 + 5 is 14."
    assert result.recoveries == ["repair_invalid_arguments", "finalize_when_done"]
    assert log.executions[0].args == {"a": 9, "b": 5}
    assert len(requests) == 3 and "tools" not in requests[2].body
    assert requests[2].messages[-1]["content"].startswith("No more tools will run")


async def test_a_repair_reply_without_json_leaves_the_refusal_to_the_model(
    loop_worker, scripted_llm
):
    result, requests, _, stored = await run(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("add", {"a": "two", "b": 2}),
            reply.text("I'm sorry, but I can't assist with that."),
            reply.tool_call("add", {"a": 2, "b": 2}, "fixed"),
            reply.text("4"),
        ],
        RuntimeConfig(repair_invalid_arguments=True),
    )
    assert result.status == "completed" and result.reply == "4"
    assert result.recoveries == ["repair_invalid_arguments"]
    assert [t.ok for t in result.tool_calls] == [False, True]
    assert not [s for s in stored if s.message.synthetic and s.message.tool_calls]
    assert result.usage.total_tokens == 15 * len(requests) == 60  # the repair request too


async def test_recoveries_are_off_by_default(loop_worker, scripted_llm):
    result, requests, _, _ = await run(
        loop_worker,
        scripted_llm,
        [OVERSIZED, reply.text("It was too long.")],
        RuntimeConfig(max_tool_args_bytes=LIMIT),
    )
    assert result.recoveries == [] and len(requests) == 2


async def test_the_argument_budget_reaches_the_tool_schemas_as_max_length(
    loop_worker, scripted_llm
):
    """``tools_string_max_length_from_args_budget``: the session's budget bounds every
    string the model may write into a call, in the schema a grammar-constraining server
    turns into its grammar; a session without the transform sends the schemas as they are."""
    capped = RuntimeConfig(
        max_tool_args_bytes=LIMIT,
        transforms={"tool_transforms": ["tools_string_max_length_from_args_budget"]},
    )
    for runtime, expected in ((capped, LIMIT), (RuntimeConfig(max_tool_args_bytes=LIMIT), None)):
        result, requests, _, _ = await run(
            loop_worker, scripted_llm, [reply.text("Nothing to save.")], runtime
        )
        assert result.status == "completed"
        schemas = {
            t["function"]["name"]: t["function"]["parameters"] for t in requests[0].body["tools"]
        }
        text = schemas["save_note"]["properties"]["text"]
        assert text.get("maxLength") == expected
        assert "maxLength" not in schemas["add"]["properties"]["a"]
