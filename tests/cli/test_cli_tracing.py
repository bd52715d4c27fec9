"""``durable-loop send`` propagates trace context: the message is one trace rooted at the
CLI's ``send_message`` span (issue 19, item 1)."""

from __future__ import annotations

import asyncio

from durable_loop.core import names
from durable_loop.testing import reply
from durable_loop.worker.observability.setup import tracing
from tests.cli.test_cli_errors import address_of, run
from tests.conftest import unique
from tests.worker.observability.test_message_traces import global_spans, of_session
from tests.worker.observability.test_worker_observability import calculator

__all__ = ["global_spans"]  # the fixture


async def test_send_makes_one_trace_of_the_message(
    loop_worker, scripted_llm, temporal_env, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"), reply.text("5")]
    )
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        w.sessions.started_workflow_ids.add(names.session_workflow_id(sid))
        result = await asyncio.to_thread(
            run,
            "send", sid, "2+3?", "--model", model, "--base-url", scripted_llm.base_url,
            "--address", address_of(temporal_env), "--task-queue", w.task_queue,
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    spans = of_session(exporter.get_finished_spans(), sid)
    (root,) = [s for s in spans if s.name == "send_message"]
    assert root.parent is None and root.attributes["durable_loop.status"] == "completed"
    worker_side = [
        s
        for s in spans
        if s.name.startswith("durable_loop.") or s.name.split(":")[-1] in ("llm_turn", "run_tool")
    ]
    assert len([s for s in worker_side if s.name == "durable_loop.llm_call"]) == 2
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
