"""What must hold after every fault: the store is whole, facts changed only by a
confirmation, and every run of the session's workflow still replays."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field
from temporalio.client import Client, WorkflowHistory

from durable_loop.client.history import fetch_histories
from durable_loop.core import names
from durable_loop.store import TranscriptStore
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_proposals import list_proposals
from durable_loop.testing.history import replay_failures
from durable_loop.workflows.registered import WORKFLOWS

WorkflowsFor = Callable[[WorkflowHistory], Sequence[type]]
"""The workflow code a run replays against (a rolling upgrade's runs: their build's)."""


class SessionCheck(BaseModel):
    session_id: str
    messages: int = 0
    half_written: list[str] = Field(default_factory=list)
    unconfirmed_facts: list[str] = Field(default_factory=list)
    replay_failures: list[str] = Field(default_factory=list)
    runs: int = 0

    @property
    def clean(self) -> bool:
        return not (self.half_written or self.unconfirmed_facts or self.replay_failures)


async def transcript_problems(store: TranscriptStore, session_id: str) -> tuple[int, list[str]]:
    """Every stored row parses; every tool call has exactly its result right after the
    assistant message (seq + 1 + index); every tool result answers a call."""
    try:
        rows = await store.read(session_id)
    except Exception as err:  # a row that does not parse is exactly what we look for
        return 0, [f"transcript unreadable: {type(err).__name__}: {err}"]
    problems: list[str] = []
    by_seq = {row.seq: row for row in rows}
    answered: set[int] = set()
    for row in rows:
        message = row.message
        if message.role != "assistant" or not message.tool_calls:
            continue
        for index, call in enumerate(message.tool_calls):
            seq = row.seq + 1 + index
            result = by_seq.get(seq)
            if result is None:
                problems.append(f"seq {row.seq}: call {call.id} has no result at seq {seq}")
            elif result.message.role != "tool" or result.message.tool_call_id != call.id:
                problems.append(f"seq {seq}: expected the result of {call.id}")
            elif result.message.envelope is None and result.message.content is None:
                problems.append(f"seq {seq}: result of {call.id} is empty")
            else:
                answered.add(seq)
    for row in rows:
        if row.message.role == "tool" and row.seq not in answered:
            problems.append(f"seq {row.seq}: tool result without its call")
    return len(rows), problems


async def fact_problems(workspace: WorkspaceStore, workspace_id: str) -> list[str]:
    """Facts change only through committed proposals: the facts version equals the number
    of committed proposals, and every facts audit row names one of them."""
    snapshot = await workspace.snapshot(workspace_id)
    proposals = await list_proposals(workspace, workspace_id)
    committed = {p.proposal_id for p in proposals if p.status == "committed"}
    problems = []
    if snapshot.facts_version != len(committed):
        problems.append(
            f"facts_version {snapshot.facts_version} but {len(committed)} committed proposals"
        )
    for entry in await workspace.audit(workspace_id):
        if entry.target == "facts" and entry.proposal_id not in committed:
            problems.append(f"facts {entry.op} {entry.path} without a confirmed proposal")
    return problems


async def check_session(
    client: Client,
    store: TranscriptStore,
    workspace: WorkspaceStore,
    session_id: str,
    workflows_for: WorkflowsFor | None = None,
) -> SessionCheck:
    messages, half_written = await transcript_problems(store, session_id)
    histories = await fetch_histories(client, names.session_workflow_id(session_id))
    failures: dict[str, str] = {}
    for history in histories:
        workflows = WORKFLOWS if workflows_for is None else workflows_for(history)
        failures.update(await replay_failures([history], workflows))
    return SessionCheck(
        session_id=session_id,
        messages=messages,
        half_written=half_written,
        unconfirmed_facts=await fact_problems(workspace, session_id),
        replay_failures=[f"run {run}: {err}" for run, err in failures.items()],
        runs=len(histories),
    )
