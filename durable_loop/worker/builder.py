"""Building a worker: clients are created here and injected into class-based activities."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import httpx
from pydantic import BaseModel, Field
from temporalio.client import Client
from temporalio.worker import Interceptor, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from durable_loop.activities.appends import TranscriptActivities
from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.llm import LlmActivities
from durable_loop.activities.long_running import LongToolActivities
from durable_loop.activities.router import RouterActivities
from durable_loop.activities.summarize import SummaryActivities
from durable_loop.activities.tools import ToolActivities
from durable_loop.activities.workspace import WorkspaceActivities
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.core.registry import ToolRegistry
from durable_loop.store import TranscriptStore
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.workflows.session import SessionWorkflow


class WorkerTuning(BaseModel):
    """Worker concurrency knobs; ``None`` keeps the SDK default."""

    max_concurrent_activities: int | None = Field(default=None, ge=1)
    max_concurrent_workflow_tasks: int | None = Field(default=None, ge=1)
    max_concurrent_local_activities: int | None = Field(default=None, ge=1)
    max_cached_workflows: int | None = Field(default=None, ge=0)
    workflow_task_pollers: int | None = Field(default=None, ge=1)
    activity_task_pollers: int | None = Field(default=None, ge=1)
    sandbox_passthrough: bool | None = Field(
        default=None,
        description="Import durable_loop once for every workflow sandbox instead of once per "
        "workflow instance: a new session or a cache miss costs about half the CPU "
        "(bench/throughput.py). Determinism then rests on the rules and the replay tests "
        "alone for durable_loop's own modules.",
    )


@dataclass
class WorkerDeps:
    store: TranscriptStore
    registry: ToolRegistry
    http: httpx.AsyncClient = field(default_factory=lambda: new_http_client())
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    workspace: WorkspaceStore | None = None
    """Settles proposals; default: a workspace store on the transcript store's engine."""


DEFAULT_HTTP_CONNECTIONS = 200


def new_http_client(max_connections: int | None = None) -> httpx.AsyncClient:
    """One pooled client per worker; its own retries are off because Temporal retries.

    ``max_connections`` should be at least the worker's activity slots: every LLM call
    holds a connection for its whole duration, so a smaller pool silently caps how many
    calls run at once below ``max_concurrent_activities`` (the rest wait for a connection).
    """
    connections = max(max_connections or 0, DEFAULT_HTTP_CONNECTIONS)
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=50)
    # The limits belong on the transport: httpx ignores a client's ``limits`` when it is
    # given a transport, which left every worker at httpx's default of 100 connections.
    transport = httpx.AsyncHTTPTransport(retries=0, limits=limits)
    return httpx.AsyncClient(transport=transport, timeout=120.0)


def activities_for(deps: WorkerDeps) -> list[object]:
    gateway = LlmGateway(deps.http, deps.environ)
    llm = LlmActivities(deps.store, gateway, deps.registry)
    summaries = SummaryActivities(deps.store, gateway)
    tools = ToolActivities(deps.store, deps.registry)
    router = RouterActivities(deps.store, gateway, deps.registry)
    transcript = TranscriptActivities(deps.store)
    workspace = WorkspaceActivities(deps.workspace or WorkspaceStore(deps.store.db))
    return [
        llm.llm_turn,
        summaries.summarize_context,
        tools.list_tools,
        tools.run_tool,
        LongToolActivities(tools).run_long_tool,
        router.router_step,
        router.router_answer,
        transcript.write_messages,
        workspace.facts_commit,
        workspace.proposal_close,
    ]


def build_worker(
    client: Client,
    deps: WorkerDeps,
    *,
    task_queue: str = TASK_QUEUE,
    tuning: WorkerTuning | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """``interceptors``: e.g. tracing and metrics (``durable_loop.worker.observability``)."""
    tuning = tuning or WorkerTuning()
    options = {k: v for k, v in tuning.model_dump().items() if v is not None}
    if options.pop("sandbox_passthrough", False):
        options["workflow_runner"] = SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules("durable_loop")
        )
    pollers = {}
    if "workflow_task_pollers" in options:
        pollers["max_concurrent_workflow_task_polls"] = options.pop("workflow_task_pollers")
    if "activity_task_pollers" in options:
        pollers["max_concurrent_activity_task_polls"] = options.pop("activity_task_pollers")
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[SessionWorkflow],
        activities=activities_for(deps),  # type: ignore[arg-type]
        interceptors=list(interceptors),
        **options,
        **pollers,
    )


def build_tool_worker(
    client: Client,
    deps: WorkerDeps,
    *,
    task_queue: str,
    tuning: WorkerTuning | None = None,
    interceptors: Sequence[Interceptor] = (),
) -> Worker:
    """A worker pool that only runs tool calls: for long-running tools (by default on
    ``long_running_queue(<session queue>)``) and for ensembles placed on their own queue."""
    tools = ToolActivities(deps.store, deps.registry)
    options = {k: v for k, v in (tuning or WorkerTuning()).model_dump().items() if v is not None}
    options.pop("sandbox_passthrough", None)
    options.pop("workflow_task_pollers", None)
    options.pop("max_concurrent_workflow_tasks", None)
    options.pop("max_cached_workflows", None)
    if "activity_task_pollers" in options:
        options["max_concurrent_activity_task_polls"] = options.pop("activity_task_pollers")
    return Worker(
        client,
        task_queue=task_queue,
        activities=[tools.run_tool, LongToolActivities(tools).run_long_tool],
        interceptors=list(interceptors),
        **options,
    )
