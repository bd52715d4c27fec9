"""Run the example: one process with a worker (your workflow plus durable-loop's, through
``DurableLoopPlugin``) that triages one ticket and prints the outcome.

    .venv/bin/durable-loop server &        # Temporal dev server + Web UI on 127.0.0.1
    .venv/bin/durable-loop local-llm &     # or pass --base-url/--model of any OpenAI-compatible API
    .venv/bin/python -m examples.child_session.run --customer acme "Our whole site is down!"
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from durable_loop import (
    DurableLoopPlugin,
    LlmEndpoint,
    StoreConfig,
    TemporalSettings,
    WorkerDeps,
    open_store,
)
from examples.child_session.models import TriageRequest
from examples.child_session.tools import registry
from examples.child_session.workflow import TASK_QUEUE, TicketTriage


async def main(args: argparse.Namespace) -> None:
    temporal = TemporalSettings.load()  # TEMPORAL_ADDRESS etc., as the CLI reads them
    store = open_store(StoreConfig(url=args.db_url))
    deps = WorkerDeps(store=store, registry=registry)
    client = await Client.connect(
        temporal.address, namespace=temporal.namespace, plugins=[DurableLoopPlugin(deps)]
    )
    request = TriageRequest(
        ticket_id=args.ticket or uuid.uuid4().hex[:8],
        customer=args.customer,
        text=args.text,
        llm=LlmEndpoint(
            model=args.model, base_url=args.base_url, api_prefix=args.api_prefix, timeout_s=180
        ),
    )
    try:
        async with Worker(client, task_queue=TASK_QUEUE, workflows=[TicketTriage]):
            outcome = await client.execute_workflow(
                TicketTriage.run,
                request,
                id=f"triage-{request.ticket_id}",
                task_queue=TASK_QUEUE,
            )
    finally:
        await deps.http.aclose()
        await store.close()
    print(outcome.model_dump_json(indent=2))
    print(f"transcript: durable-loop trace ticket-{request.ticket_id}")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("text", help="the ticket")
    parser.add_argument("--customer", default="acme")
    parser.add_argument("--ticket", help="ticket id (default: random)")
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--api-prefix", default="/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--db-url", default="sqlite:///.durable-loop/durable-loop.db")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse()))
