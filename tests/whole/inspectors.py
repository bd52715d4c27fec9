"""Reading the all-features session back through every inspector, while its worker runs.

The CLI (``trace`` as a table and as JSON, ``workspace``, ``result``), the HTTP service
(``GET /v1/sessions/{id}/trace``, the message result, the workspace, the approval page),
the session's Queries, the memo the Temporal Web UI shows, and every run's history.
Nothing is checked here: what each answered is kept in :class:`Seen`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from click.testing import Result
from temporalio.client import WorkflowHistory
from typer.testing import CliRunner

from durable_loop.client.history import fetch_histories
from durable_loop.console import app
from durable_loop.core import names
from durable_loop.core.approvals import ToolApprovalList
from durable_loop.core.contracts import SessionStatus
from durable_loop.core.proposals import ProposalList
from tests.whole.session import Drive, Rig
from tests.whole.story import PAY

COLUMNS = "200"
"""Wide enough that the tables' cells do not wrap what the checks read."""


@dataclass
class Described:
    """What the Temporal Web UI shows of a workflow besides its history."""

    memo: Mapping[str, Any]
    static_summary: str | None


@dataclass
class Seen:
    status: SessionStatus
    child_status: SessionStatus
    listing: ToolApprovalList
    proposals: ProposalList
    cli: dict[str, Result] = field(default_factory=dict)
    api: dict[str, httpx.Response] = field(default_factory=dict)
    page_after: str = ""
    described: dict[str, Described] = field(default_factory=dict)
    histories: dict[str, list[WorkflowHistory]] = field(default_factory=dict)


def cli_env() -> dict[str, str]:
    env = {"COLUMNS": COLUMNS}
    keys = os.environ.get("DURABLE_LOOP_TEST_CODEC_KEYS", "").strip()
    if keys:
        env["DURABLE_LOOP_CODEC_KEYS"] = keys
    return env


async def invoke(*args: str) -> Result:
    runner = CliRunner()
    return await asyncio.to_thread(runner.invoke, app, list(args), env=cli_env())


async def describe(rig: Rig, session_id: str) -> Described:
    described = await rig.sessions.handle(session_id).describe()
    return Described(memo=await described.memo(), static_summary=await described.static_summary())


async def inspect(rig: Rig, done: Drive, store_url: str) -> Seen:
    sid, child, s = done.session_id, done.child_id, rig.sessions
    seen = Seen(
        status=await s.status(sid),
        child_status=await s.status(child),
        listing=await s.tool_approvals(sid),
        proposals=await s.proposals(sid),
    )
    address = rig.env.client.service_client.config.target_host
    on = ("--address", address)
    store = ("--db-url", store_url)
    http = rig.service
    # the traces first: asking for a result is an Update, which adds to the history
    seen.cli["trace"] = await invoke("trace", sid, *on, *store)
    seen.cli["trace --json"] = await invoke("trace", sid, *on, *store, "--json")
    seen.api["trace"] = await http.get(f"/v1/sessions/{sid}/trace", headers=bearer())
    seen.cli["child trace --json"] = await invoke("trace", child, *on, *store, "--json")
    seen.api["child trace"] = await http.get(f"/v1/sessions/{child}/trace", headers=bearer())
    seen.cli["workspace"] = await invoke("workspace", sid, *on, *store)
    seen.cli["workspace --json"] = await invoke("workspace", sid, *on, *store, "--json")
    seen.cli["result"] = await invoke("result", sid, PAY.message_id, *on)
    result_url = f"/v1/sessions/{sid}/messages/{PAY.message_id}/result"
    seen.api["result"] = await http.get(result_url, headers=bearer())
    seen.api["workspace"] = await http.get(f"/v1/sessions/{sid}/workspace", headers=bearer())
    seen.api["workspace page"] = await http.get(f"/ui/sessions/{sid}/workspace")
    page = await http.get("/ui/approvals")
    seen.page_after = page.text if page.status_code == 200 else f"HTTP {page.status_code}"
    for session_id in (sid, child):
        seen.described[session_id] = await describe(rig, session_id)
        workflow_id = names.session_workflow_id(session_id)
        seen.histories[session_id] = await fetch_histories(s.client, workflow_id)
    return seen


TOKENS = {"alice-token-0001": "alice"}


def bearer() -> dict[str, str]:
    return {"Authorization": "Bearer alice-token-0001"}
