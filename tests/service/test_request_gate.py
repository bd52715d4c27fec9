"""Hostile bodies over real HTTP (uvicorn on 127.0.0.1): no token, no body read; a chunked
body is bounded as it streams in, like one with a Content-Length."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE

MB = 1_000_000
CHUNK = b"x" * MB
FRAME = b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], dict]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)
    }
    body = await reader.readexactly(int(headers["content-length"]))
    return status, headers, json.loads(body)


async def stream_chunked(base: str, path: str, auth: str | None, megabytes: int):
    """POST ``megabytes`` MB chunked, reading the answer while sending: (status, headers,
    body, bytes sent when the answer had come)."""
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    head = f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
    head += f"Authorization: {auth}\r\n" if auth else ""
    writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
    answer = asyncio.create_task(_answer(reader))
    sent = 0
    try:
        for _ in range(megabytes):
            if answer.done():
                break
            writer.write(FRAME)
            await asyncio.wait_for(writer.drain(), timeout=10)
            sent += MB
        else:
            writer.write(b"0\r\n\r\n")
    except (ConnectionError, TimeoutError):
        pass  # the server answered and closed while this client was still sending
    status, headers, body = await asyncio.wait_for(answer, timeout=60)
    writer.close()
    return status, headers, body, sent


async def test_an_unauthenticated_chunked_body_is_refused_before_it_is_read(
    loop_worker, live_service
):
    async with loop_worker() as w, live_service(w) as (base, _):
        async with httpx.AsyncClient(base_url=base) as http:  # warm the server's code paths
            assert (await http.get("/v1/proposals")).status_code == 401
        before = rss_kb()
        path = f"/v1/sessions/{unique('s')}/messages"
        status, headers, body, sent = await stream_chunked(base, path, None, megabytes=50)
        grown_kb = rss_kb() - before
        bad_token = await stream_chunked(base, path, "Bearer not-a-token-0", megabytes=20)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    assert headers["www-authenticate"] == "Bearer"
    assert sent < 10 * MB, f"{sent} bytes were taken before the 401"
    assert grown_kb < 8_000, f"the process grew by {grown_kb} kB"
    assert (bad_token[0], bad_token[2]["error"]["code"]) == (401, "INVALID_TOKEN")
    assert bad_token[3] < 10 * MB


async def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(loop_worker, live_service):
    async with loop_worker() as w, live_service(w, max_body_bytes=64_000) as (base, _):
        async with httpx.AsyncClient(base_url=base) as http:
            assert (await http.get("/v1/proposals", headers=ALICE)).status_code == 200
        before = rss_kb()
        path = f"/v1/sessions/{unique('s')}/messages"
        status, _, body, sent = await stream_chunked(
            base, path, ALICE["Authorization"], megabytes=50
        )
        grown_kb = rss_kb() - before
    assert (status, body["error"]["code"]) == (413, "BODY_TOO_LARGE")
    assert "64000" in body["error"]["message"]
    assert sent < 10 * MB, f"{sent} bytes were taken before the 413"
    assert grown_kb < 8_000, f"the process grew by {grown_kb} kB"


async def test_a_chunked_body_within_the_limit_is_served(loop_worker, scripted_llm, live_service):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("chunked and answered")])
    settings = settings_for(scripted_llm, model).model_dump(mode="json")
    text = json.dumps({"text": "hi", "settings": settings}).encode()

    async def pieces():
        for start in range(0, len(text), 100):
            yield text[start : start + 100]

    async with (
        loop_worker() as w,
        live_service(w) as (base, _),
        httpx.AsyncClient(base_url=base, timeout=60) as http,
    ):
        answer = await http.post(
            f"/v1/sessions/{sid}/messages",
            content=pieces(),
            headers={**ALICE, "Content-Type": "application/json"},
        )
    assert answer.request.headers["transfer-encoding"] == "chunked"
    assert answer.status_code == 200, answer.text
    assert answer.json()["reply"] == "chunked and answered"
