"""The worker's HTTP pool: as many LLM calls in flight as activity slots."""

from __future__ import annotations

import asyncio
import threading

from durable_loop.testing import ScriptedLLM, reply
from durable_loop.worker.builder import new_http_client

IN_FLIGHT = 150


async def test_the_pool_holds_more_calls_than_httpx_default_of_100():
    """Every request waits at a barrier until IN_FLIGHT requests are open at once; with a
    pool of 100 connections the barrier would break instead."""
    barrier = threading.Barrier(IN_FLIGHT, timeout=20)

    def together(request):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return reply.error(503, "fewer requests in flight than expected")
        return reply.text("ok")

    with ScriptedLLM() as llm:
        llm.script("m", [], then=together)
        async with new_http_client(max_connections=IN_FLIGHT) as http:
            responses = await asyncio.gather(
                *(
                    http.post(f"{llm.base_url}/v1/chat/completions", json={"model": "m"})
                    for _ in range(IN_FLIGHT)
                )
            )
    assert [r.status_code for r in responses] == [200] * IN_FLIGHT
