"""Activities of the naive baseline: the same endpoint, wire format and tool dispatch as
durable-loop, but the transcript comes in with the input and the output goes back inline."""

from __future__ import annotations

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from bench.naive_loop import (
    NAIVE_LLM,
    NAIVE_TOOL,
    NaiveLlmInput,
    NaiveLlmOutput,
    NaiveToolInput,
    NaiveToolOutput,
)
from durable_loop.activities.dispatch import dispatch
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import get_adapter
from durable_loop.core.providers.openai_compat import loads_lenient
from durable_loop.core.registry import ToolContext, ToolRegistry

MAX_OUTPUT_BYTES = 1_000_000
TOOL_TIMEOUT_S = 60.0


class NaiveActivities:
    def __init__(self, http: httpx.AsyncClient, registry: ToolRegistry) -> None:
        self.http = http
        self.registry = registry

    @activity.defn(name=NAIVE_LLM)
    async def llm(self, inp: NaiveLlmInput) -> NaiveLlmOutput:
        endpoint = inp.endpoint
        adapter = get_adapter(endpoint.provider)
        plan = PromptPlan(
            model=endpoint.model,
            session_id=activity.info().workflow_id,
            upto_seq=len(inp.messages),
            tools=inp.tools,
            tool_choice="auto" if inp.tools else None,
        )
        request = adapter.build_request(plan, inp.messages)
        url = f"{endpoint.base_url}{endpoint.api_prefix}{request.endpoint}"
        response = await self.http.post(url, json=request.body, timeout=endpoint.timeout_s)
        if response.status_code >= 400:
            verdict = adapter.classify_status(response.status_code, response.text)
            raise ApplicationError(
                f"HTTP {response.status_code}: {response.text[:300]}",
                type=verdict.code,
                non_retryable=not verdict.retryable,
            )
        parsed = adapter.parse_response(loads_lenient(response.text), response.text)
        return NaiveLlmOutput(message=parsed.message)

    @activity.defn(name=NAIVE_TOOL)
    async def tool(self, inp: NaiveToolInput) -> NaiveToolOutput:
        info = activity.info()
        ctx = ToolContext(
            session_id=info.workflow_id,
            workflow_id=info.workflow_id,
            call_id=inp.call_id,
            turn=inp.turn,
            attempt=info.attempt,
            idempotency_key=f"{info.workflow_id}:{inp.call_id}",
        )
        done = await dispatch(
            self.registry.get(inp.name),
            inp.name,
            inp.arguments,
            ctx,
            timeout_s=TOOL_TIMEOUT_S,
            max_output_bytes=MAX_OUTPUT_BYTES,
            last_attempt=True,
        )
        envelope, size = done.envelope, done.size
        return NaiveToolOutput(envelope=envelope, output_bytes=size)

    def all(self) -> list[object]:
        return [self.llm, self.tool]
