"""A message sent through the HTTP service is one trace: the worker's spans join the
request's ``send_message`` span, with the client ``serve`` builds (``connect()``'s
defaults) (issue 19, item 1)."""

from __future__ import annotations

import httpx

from durable_loop.client.connect import connect
from durable_loop.client.sessions import SessionClient
from durable_loop.client.settings import TemporalSettings
from durable_loop.service import ServiceDeps, create_app
from durable_loop.service.auth import TokenBook
from durable_loop.service.deps import ServiceLimits
from durable_loop.testing import reply
from durable_loop.worker.observability.setup import tracing
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE, TOKENS
from tests.worker.observability.test_message_traces import address_of, global_spans, of_session
from tests.worker.observability.test_worker_observability import calculator

__all__ = ["global_spans"]  # the fixture


async def test_a_posted_message_is_one_trace(
    loop_worker, scripted_llm, temporal_env, ws, store_url, global_spans
):
    exporter, provider = global_spans
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"), reply.text("5")]
    )
    async with loop_worker(calculator(), interceptors=tracing(provider, None)) as w:
        client = await connect(TemporalSettings(address=address_of(temporal_env)))
        sessions = SessionClient(client, task_queue=w.task_queue)
        w.sessions.started_workflow_ids.add(f"session-{sid}")
        deps = ServiceDeps(
            sessions=sessions,
            tokens=TokenBook(TOKENS),
            workspace=ws,
            db_url=store_url,
            limits=ServiceLimits(),
        )
        transport = httpx.ASGITransport(app=create_app(deps))
        async with httpx.AsyncClient(transport=transport, base_url="http://service") as http:
            settings = settings_for(scripted_llm, model).model_dump(mode="json")
            started = await http.post(
                "/v1/sessions", json={"session_id": sid, "settings": settings}, headers=ALICE
            )
            sent = await http.post(
                f"/v1/sessions/{sid}/messages", json={"text": "2+3?"}, headers=ALICE
            )
    assert started.status_code == 201 and sent.status_code == 200, sent.text
    spans = of_session(exporter.get_finished_spans(), sid)
    (root,) = [s for s in spans if s.name == "send_message"]
    (start,) = [s for s in spans if s.name == "StartWorkflow:Session"]
    assert start.context.trace_id != root.context.trace_id  # the POST /sessions request
    worker_side = [s for s in spans if s.name.startswith("durable_loop.")]
    assert len([s for s in worker_side if s.name == "durable_loop.llm_call"]) == 2
    assert {s.context.trace_id for s in worker_side} == {root.context.trace_id}
