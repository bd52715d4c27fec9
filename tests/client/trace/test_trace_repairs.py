"""A call a named recovery re-issued shows in the trace under the turn it repairs."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import reply
from tests.client.trace.test_trace_messages import rendered
from tests.client.trace.test_trace_sessions import trace_of
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


async def test_a_repaired_call_is_shown_as_a_repair_with_its_result(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": "two", "b": 2}, call_id="c-1"),
            reply.text('{"a": 2, "b": 2}'),
            reply.text("4"),
        ],
    )
    runtime = RuntimeConfig(repair_invalid_arguments=True)
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "2+2?")
        trace = await trace_of(w, sid)
    assert result.status == "completed" and result.recoveries == ["repair_invalid_arguments"]

    first = trace.turns[0]
    assert [(c.call_id, c.ok, c.error_codes, c.repair) for c in first.calls] == [
        ("c-1", False, ["INVALID_ARGS"], None),
        ("c-1-repair", True, [], "repair_invalid_arguments"),
    ]
    assert first.calls[1].executed and first.calls[1].source == "history"
    assert trace.usage.total_tokens == result.usage.total_tokens == 45
    assert "repair (repair_invalid_arguments): add c-1-repair ok" in rendered(trace)
