"""After a cancelled tool turn the next request is valid in every provider's wire shape:
each call the model made is answered right after it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from durable_loop.testing import reply
from durable_loop.testing import reply_anthropic as anthropic
from durable_loop.testing import reply_gemini as gemini
from tests.conftest import settings_for, unique
from tests.workflows.cancel_tools.test_parallel_tools import ThreadsafeEvent, stubborn_tools
from tests.workflows.test_providers_anthropic import KEY_ENV as ANTHROPIC_KEY
from tests.workflows.test_providers_anthropic import anthropic_settings
from tests.workflows.test_providers_gemini import KEY_ENV as GEMINI_KEY
from tests.workflows.test_providers_gemini import gemini_settings
from tests.workflows.toolkit import ToolLog

CALLS = [("add", {"a": 1, "b": 2}, "c_add"), ("sleepy", {}, "c_sleepy")]


def openai_pairs(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    messages = body["messages"]
    at = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
    calls = [c["id"] for c in messages[at]["tool_calls"]]
    answers = [m["tool_call_id"] for m in messages[at + 1 : at + 1 + len(calls)]]
    return calls, answers


def anthropic_pairs(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    messages = body["messages"]
    at = next(
        i
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
        and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in m["content"])
    )
    calls = [b["id"] for b in messages[at]["content"] if b.get("type") == "tool_use"]
    following = messages[at + 1]["content"]
    answers = [b["tool_use_id"] for b in following if b.get("type") == "tool_result"]
    return calls, answers


def gemini_pairs(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    contents = body["contents"]
    at = next(
        i
        for i, c in enumerate(contents)
        if c["role"] == "model" and any("functionCall" in p for p in c["parts"])
    )
    calls = [p["functionCall"]["name"] for p in contents[at]["parts"] if "functionCall" in p]
    following = contents[at + 1]["parts"]
    answers = [p["functionResponse"]["name"] for p in following if "functionResponse" in p]
    return calls, answers


PROVIDERS = {
    "openai": (
        lambda llm, model: settings_for(llm, model),
        reply.tool_calls(*CALLS),
        reply.text("after"),
        openai_pairs,
        {},
    ),
    "anthropic": (
        anthropic_settings,
        anthropic.tool_calls(*CALLS),
        anthropic.text("after"),
        anthropic_pairs,
        {ANTHROPIC_KEY: "sk-ant-test"},
    ),
    "gemini": (
        gemini_settings,
        gemini.function_calls(*CALLS),
        gemini.text("after"),
        gemini_pairs,
        {GEMINI_KEY: "gemini-test"},
    ),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_the_request_after_a_cancelled_tool_turn_pairs_every_call(
    loop_worker, scripted_llm, provider
):
    make_settings, calls, answer, pairs, environ = PROVIDERS[provider]
    model, sid, log = unique(provider), unique("s"), ToolLog()
    loop = asyncio.get_running_loop()
    started = {"sleepy": asyncio.Event(), "stubborn": asyncio.Event()}
    signals = {name: ThreadsafeEvent(loop, event) for name, event in started.items()}
    scripted_llm.script(model, [calls, answer])
    async with loop_worker(stubborn_tools(log, signals), environ=environ) as w:
        await w.sessions.start(sid, make_settings(scripted_llm, model))
        sending = asyncio.create_task(w.sessions.send(sid, "add, then sleep"))
        await asyncio.wait_for(started["sleepy"].wait(), 15)
        cancelled = await w.sessions.cancel(sid)
        await sending
        after = await w.sessions.send(sid, "what happened?")
    assert cancelled.status == "cancelled" and after.reply == "after"
    made, answered = pairs(scripted_llm.requests(model)[1].body)
    assert len(made) == 2 and answered == made
