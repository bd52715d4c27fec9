"""``durable-loop serve`` as a real process: refuses to run without tokens, and serves the
API with bearer auth against a Temporal server."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx

from durable_loop.cli.devserver import free_port

CLI = str(Path(sys.executable).with_name("durable-loop"))


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DURABLE_LOOP_API_TOKENS")}
    return {**env, "NO_COLOR": "1", **extra}


async def test_serve_refuses_to_start_without_tokens():
    process = await asyncio.create_subprocess_exec(
        CLI,
        "serve",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean_env(),
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert err.decode().startswith("error: NO_API_TOKENS:")


async def test_serve_answers_with_auth(temporal_env, tmp_path):
    port = free_port()
    address = temporal_env.client.service_client.config.target_host
    process = await asyncio.create_subprocess_exec(
        CLI,
        "serve",
        "--port",
        str(port),
        "--address",
        address,
        "--db-url",
        f"sqlite:///{tmp_path / 'store.db'}",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean_env(DURABLE_LOOP_API_TOKENS="serve-token-01=dana"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base) as http:
            for _ in range(200):
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            refused = await http.get("/v1/proposals")
            listing = await http.get(
                "/v1/proposals", headers={"Authorization": "Bearer serve-token-01"}
            )
            missing = await http.get(
                "/v1/sessions/never-started", headers={"Authorization": "Bearer serve-token-01"}
            )
            page = await http.get("/ui/approvals")
    finally:
        process.terminate()
        await asyncio.wait_for(process.communicate(), 30)
    assert refused.status_code == 401
    assert listing.status_code == 200, listing.text
    assert listing.json()["items"] == []
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "SESSION_NOT_FOUND"
    assert page.status_code == 200 and "API token" in page.text


def test_serve_has_a_port_of_its_own():
    from durable_loop.cli.commands.serve import DEFAULT_PORT
    from durable_loop.cli.local_llm import DEFAULT_PORT as LOCAL_LLM_PORT
    from durable_loop.core.endpoint import LlmEndpoint

    endpoint_port = httpx.URL(LlmEndpoint(model="m").base_url).port
    assert DEFAULT_PORT not in {LOCAL_LLM_PORT, endpoint_port}
