""" "Answer without tools" requests (the repeated-call guard's follow-up, the empty-final
finalisation) after tool calls, per provider: Anthropic and Gemini keep the tools and ask
for no call (both refuse tool blocks without tools); OpenAI-compatible leaves them out
(the local model prints calls as text under tool_choice "none")."""

from __future__ import annotations

import pytest

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from durable_loop.testing import reply_anthropic as anthropic
from durable_loop.testing import reply_gemini as gemini
from tests.conftest import settings_for, unique
from tests.workflows.test_providers_anthropic import KEY_ENV as ANTHROPIC_KEY
from tests.workflows.test_providers_anthropic import anthropic_settings
from tests.workflows.test_providers_gemini import KEY_ENV as GEMINI_KEY
from tests.workflows.test_providers_gemini import gemini_settings
from tests.workflows.toolkit import ToolLog, recording_tools

KEYS = {ANTHROPIC_KEY: "sk-ant-test", GEMINI_KEY: "g-test"}


async def run(loop_worker, scripted_llm, model, settings, steps):
    log = ToolLog()
    scripted_llm.script(model, steps)
    sid = unique("s")
    async with loop_worker(recording_tools(log), environ=KEYS) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "1+2?")
    assert result.status == "completed", result
    assert log.count("add") == 1
    return scripted_llm.requests(model)


NEEDS_TOOLS = {
    "anthropic": (
        anthropic_settings,
        lambda call_id: anthropic.tool_call("add", {"a": 1, "b": 2}, call_id),
        anthropic.text,
        {"tool_choice": {"type": "none"}},
    ),
    "gemini": (
        gemini_settings,
        lambda call_id: gemini.function_call("add", {"a": 1, "b": 2}),
        gemini.text,
        {"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}},
    ),
}


@pytest.mark.parametrize("provider", sorted(NEEDS_TOOLS))
async def test_the_tools_stay_and_no_call_is_asked_for(loop_worker, scripted_llm, provider):
    settings_of, call, text, no_call = NEEDS_TOOLS[provider]
    model = unique(provider)
    requests = await run(
        loop_worker,
        scripted_llm,
        model,
        settings_of(scripted_llm, model),
        [call("c1"), call("c2"), text("3")],
    )
    first, last = requests[0].body, requests[2].body
    assert last["tools"] == first["tools"]
    assert {key: last[key] for key in no_call} == no_call


async def test_openai_compatible_leaves_the_tools_out(loop_worker, scripted_llm):
    model = unique("m")
    requests = await run(
        loop_worker,
        scripted_llm,
        model,
        settings_for(scripted_llm, model),
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.tool_call("add", {"a": 1, "b": 2}, "again"),
            reply.text("3"),
        ],
    )
    last = requests[2].body
    assert "tools" not in last and "tool_choice" not in last


async def test_anthropic_empty_final_finalisation_keeps_the_tools(loop_worker, scripted_llm):
    model = unique("claude")
    runtime = RuntimeConfig(fix_empty_final=True)
    requests = await run(
        loop_worker,
        scripted_llm,
        model,
        anthropic_settings(scripted_llm, model, runtime=runtime),
        [
            anthropic.tool_call("add", {"a": 1, "b": 2}, "toolu_1"),
            anthropic.text(""),
            anthropic.text("3"),
        ],
    )
    last = requests[2].body
    assert last["tools"] and last["tool_choice"] == {"type": "none"}
