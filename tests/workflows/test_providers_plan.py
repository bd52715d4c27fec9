"""The prompt plan fingerprint in the trace: equal inputs, equal fingerprints; a changed
tool surface, a different one."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


async def run_session(loop_worker, scripted_llm, runtime: RuntimeConfig | None = None):
    # The model name is part of the surface, so every session uses the same one; sessions
    # run one after another, so the shared reply queue stays in order.
    model, sid = "fingerprint-model", unique("s")
    scripted_llm.script(model, [reply.tool_call("add", {"a": 2, "b": 3}), reply.text("5")])
    async with loop_worker(recording_tools(ToolLog())) as w:
        settings = settings_for(scripted_llm, model, runtime=runtime, system_prompt="Be brief.")
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "2+3?")
        stored = await w.store.read(sid)
    assert result.status == "completed", result
    return [m.meta for m in stored if m.message.role == "assistant"]


async def test_two_sessions_with_the_same_inputs_share_fingerprints(loop_worker, scripted_llm):
    one = await run_session(loop_worker, scripted_llm)
    two = await run_session(loop_worker, scripted_llm)
    assert [m["plan_fingerprint"] for m in one] == [m["plan_fingerprint"] for m in two]
    assert len({m["plan_fingerprint"] for m in one}) == 2  # each turn has its own surface
    assert all(len(m["plan_fingerprint"]) == 64 for m in one)


async def test_a_changed_tool_surface_changes_the_fingerprint(loop_worker, scripted_llm):
    base = await run_session(loop_worker, scripted_llm)
    masked = await run_session(loop_worker, scripted_llm, RuntimeConfig(tool_denylist=["vault"]))
    stripped = await run_session(
        loop_worker,
        scripted_llm,
        RuntimeConfig(tool_transforms=["openai_tools_strip_function_descriptions"]),
    )
    prints = {m[0]["plan_fingerprint"] for m in (base, masked, stripped)}
    assert len(prints) == 3
    assert "vault" in base[0]["tools_sent"] and "vault" not in masked[0]["tools_sent"]
    assert "openai_tools_strip_function_descriptions" in stripped[0]["transforms"]
    assert "openai_tools_strip_function_descriptions" not in base[0]["transforms"]
