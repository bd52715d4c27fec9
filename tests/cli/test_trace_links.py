"""`durable-loop trace` links to the Web UI the server was started with (`--ui-port`), or
to the configured one; never to the gRPC port + 1000."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.client.web_ui import record_web_ui
from durable_loop.console import app
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


def trace_json(*args: str, env: dict[str, str] | None = None) -> dict:
    result = CliRunner().invoke(app, ["trace", *args, "--no-store", "--json"], env=env)
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


async def test_trace_links_to_the_recorded_then_the_configured_web_ui(
    loop_worker, scripted_llm, temporal_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("hello")])
    async with loop_worker() as w:
        await w.sessions.start_and_send(sid, settings_for(scripted_llm, model), "hi")
    address = temporal_env.client.service_client.config.target_host
    monkeypatch.chdir(tmp_path)
    record_web_ui(address, "http://127.0.0.1:17434", Path(".durable-loop"))

    recorded = await asyncio.to_thread(trace_json, sid, "--address", address)
    configured = await asyncio.to_thread(
        trace_json, sid, "--address", address, env={"DURABLE_LOOP_WEB_UI_URL": "https://ui.example"}
    )
    flag = await asyncio.to_thread(
        trace_json, sid, "--address", address, "--web-ui-url", "https://flag.example"
    )

    workflow = f"/namespaces/default/workflows/session-{sid}"
    assert recorded["ui_url"] == f"http://127.0.0.1:17434{workflow}"
    assert configured["ui_url"] == f"https://ui.example{workflow}"
    assert flag["ui_url"] == f"https://flag.example{workflow}"
