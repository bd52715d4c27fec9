"""tool_use_guidance: added to the system prompt of the requests that offer tools."""

from __future__ import annotations

from durable_loop.core import presets
from durable_loop.core.config import DEFAULT_TOOL_USE_GUIDANCE, RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

GUIDED = RuntimeConfig.model_validate(presets.tool_use_guidance())


async def send(loop_worker, scripted_llm, steps, runtime, system_prompt=None):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, steps)
    async with loop_worker(recording_tools(ToolLog())) as w:
        settings = settings_for(scripted_llm, model, runtime=runtime, system_prompt=system_prompt)
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "hi")
    return result, scripted_llm.requests(model)


def system_of(request) -> str | None:
    first = request.messages[0]
    return first["content"] if first["role"] == "system" else None


async def test_guidance_follows_the_session_prompt_on_requests_with_tools(
    loop_worker, scripted_llm
):
    result, requests = await send(
        loop_worker,
        scripted_llm,
        [reply.tool_call("add", {"a": 1, "b": 2}), reply.text(""), reply.text("3")],
        GUIDED,
        system_prompt="You run a calculator.",
    )
    assert result.status == "completed" and result.reply == "3"
    assert system_of(requests[0]) == f"You run a calculator.\n\n{DEFAULT_TOOL_USE_GUIDANCE}"
    assert "tools" in requests[1].body
    assert "tools" not in requests[2].body  # the empty-final fix sends no tools ...
    assert system_of(requests[2]) == "You run a calculator."  # ... and no guidance


async def test_without_the_workaround_the_prompt_is_the_session_s_own(loop_worker, scripted_llm):
    _, requests = await send(loop_worker, scripted_llm, [reply.text("Hello!")], RuntimeConfig())
    assert system_of(requests[0]) is None
    _, guided = await send(loop_worker, scripted_llm, [reply.text("Hello!")], GUIDED)
    assert system_of(guided[0]) == DEFAULT_TOOL_USE_GUIDANCE
