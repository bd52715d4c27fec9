"""The Temporal Web UI of the embedded dev server, in headless Chromium: a session is
findable by its pending approval and readable by its activity summaries."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest_asyncio
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.cli.devserver import free_port, start_dev_server
from durable_loop.client.sessions import SessionClient
from durable_loop.store import StoreConfig, open_store
from durable_loop.testing import reply
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.workflows.visibility import PENDING_QUERY
from tests.browser.conftest import artifact
from tests.client.kit import FACTS, RENAME, workspace_store
from tests.conftest import settings_for, unique
from tests.workflows.proposal_kit import first_pending


@pytest_asyncio.fixture
async def dev_server(tmp_path):
    server = start_dev_server(tmp_path / "temporal", port=free_port(), ui_port=free_port())
    try:
        yield server
    finally:
        server.stop()


async def test_web_ui_shows_the_pending_approval_and_tool_summary(
    browser, dev_server, scripted_llm, store_url
):
    client = await Client.connect(dev_server.address, data_converter=pydantic_data_converter)
    ws = workspace_store(store_url)
    store = open_store(StoreConfig(url=store_url))
    http = new_http_client()
    deps = WorkerDeps(store=store, registry=workspace_tools(ws), http=http, environ={})
    model, sid = unique("m"), unique("s")
    try:
        async with build_worker(client, deps, task_queue="web-ui"):
            sessions = SessionClient(client, task_queue="web-ui")
            await ws.create(sid, facts=FACTS)
            scripted_llm.script(
                model, [reply.tool_call("facts_propose", RENAME), reply.text("Proposed.")]
            )
            settings = settings_for(scripted_llm, model).model_copy(
                update={"title": "Quarterly report"}
            )
            result = await sessions.start_and_send(sid, settings, "rename the title")
            assert result.status == "completed", result
            assert sessions.search_attributes is True  # the dev server has them registered
            pending = await first_pending(sessions.approvals, sid)

            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            await page.goto(
                f"{dev_server.ui_url}/namespaces/{dev_server.namespace}/workflows"
                f"?query={quote(PENDING_QUERY)}"
            )
            await page.get_by_role("link", name=f"session-{sid}").first.wait_for()

            await page.goto(dev_server.workflow_url(f"session-{sid}"))
            await page.get_by_text("run_tool • tool: facts_propose").wait_for()
            await page.get_by_text(f"llm_turn • llm: {model} turn 1").wait_for()
            await page.get_by_text(f"proposal {pending.proposal_id} expires").wait_for()
            await page.screenshot(path=artifact("web-ui-session.png"), full_page=True)

            await page.get_by_role("tab", name="Search Attributes").click()
            attributes = page.get_by_text('"DurableLoopPendingProposals": 1')
            await attributes.wait_for()
            body = await page.inner_text("body")
            assert f'"DurableLoopModel": "{model}"' in body
            assert '"DurableLoopTurns": 2' in body
            await page.get_by_role("tab", name="Memo").click()
            await page.get_by_text(json.dumps("Quarterly report")).first.wait_for()
            await sessions.handle(sid).terminate("test finished")
    finally:
        await http.aclose()
        await store.close()
        await ws.close()
