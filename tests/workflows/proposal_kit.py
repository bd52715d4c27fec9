"""Helpers for proposal tests: a workspace store per test, simulated days, history checks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from durable_loop.client.proposals import ProposalClient as ApprovalClient
from durable_loop.core.config import RuntimeConfig, WorkspaceSettings
from tests.conftest import settings_for

T = TypeVar("T")


def day(env: WorkflowEnvironment) -> timedelta:
    """One simulated day: a real day on the time-skipping server, a second on the dev server."""
    return timedelta(days=1) if env.supports_time_skipping else timedelta(seconds=1)


def session_settings(llm, model, env, *, ttl_days=7.0, block=False, runtime=None):
    return settings_for(llm, model, runtime=runtime or RuntimeConfig()).model_copy(
        update={
            "workspace": WorkspaceSettings(
                proposal_ttl_s=ttl_days * day(env).total_seconds(), block_until_decision=block
            )
        }
    )


async def eventually(probe: Callable[[], Awaitable[T | None]], timeout_s: float = 20.0) -> T:
    """Poll until ``probe`` returns something truthy (activities take real time)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        value = await probe()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


async def first_pending(approvals: ApprovalClient, session_id: str):
    async def probe():
        listing = await approvals.proposals(session_id)
        return listing.pending[0] if listing.pending else None

    return await eventually(probe)


async def decided(approvals: ApprovalClient, session_id: str, proposal_id: str):
    async def probe():
        listing = await approvals.proposals(session_id)
        return next((d for d in listing.decided if d.proposal_id == proposal_id), None)

    return await eventually(probe)


def event_types(histories: list[WorkflowHistory]) -> list[str]:
    return [EventType.Name(e.event_type) for h in histories for e in h.events]


def activity_names(histories: list[WorkflowHistory]) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for h in histories
        for e in h.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def history_text(histories: list[WorkflowHistory]) -> str:
    return "\n".join(json.dumps(h.to_json_dict()) for h in histories)


def tool_envelopes(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]


def user_texts(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "user"]
