"""Run one eval job through the real session workflow and score it.

A job is one (scenario, model, profile, strategy, fallback, trial); it starts its own
session, sends the scenario's prompt, then reads the RunResult, the stored transcript
and the workspace draft and applies the scenario's assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError

from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import SessionSettings
from durable_loop.core.contracts import RunResult
from durable_loop.core.errors import ErrorCode
from durable_loop.evals.approver import decide_until_final
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.scenario import Scenario, Trace
from durable_loop.evals.schema import RunRecord
from durable_loop.store import TranscriptStore
from durable_loop.store.workspace import WorkspaceStore

HTTP_STATUS = re.compile(r"HTTP (\d{3})")
TIMEOUT_CODES = {ErrorCode.TOOL_TIMEOUT, ErrorCode.TIMEOUT}


@dataclass(frozen=True)
class Job:
    scenario: Scenario
    settings: SessionSettings
    model: str
    provider: str
    profile: str
    strategy: str
    trial: int
    fallback: bool = False
    timeout_s: float = 300.0


@dataclass(frozen=True)
class EvalTarget:
    """Where jobs run: a session client on a worker, and the stores it writes."""

    sessions: SessionClient
    store: TranscriptStore
    workspace: WorkspaceStore


def classify(result: RunResult | None, trace: Trace, problems: list[str], job: Job) -> str | None:
    """The failure taxonomy: the first reason that explains a failed run."""
    if not problems:
        return None
    if result is None:
        return ErrorCode.TIMEOUT
    if result.status == "failed" and result.error is not None:
        status = HTTP_STATUS.search(result.error.message)
        if status:
            return f"HTTP_{status.group(1)}"
        return ErrorCode.TIMEOUT if result.error.code in TIMEOUT_CODES else result.error.code
    if job.scenario.uses_tools and not trace.tool_calls:
        return ErrorCode.NO_TOOL_CALLS
    names = {n for n, _, _ in trace.tool_calls}
    if trace.tool_calls and not any(trace.ok_calls(n) for n in names):
        return ErrorCode.TOOL_ERROR
    if not (trace.reply or "").strip():
        return ErrorCode.EMPTY_FINAL
    return EvalCode.ASSERTION_FAILED


async def run_job(job: Job, target: EvalTarget) -> RunRecord:
    session_id = f"eval-{job.scenario.name}-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    result: RunResult | None = None
    try:
        await target.sessions.start(session_id, job.settings)
        result = await asyncio.wait_for(
            target.sessions.send(
                session_id, job.scenario.prompt, output_schema=job.scenario.output_schema
            ),
            timeout=job.timeout_s,
        )
        approver = job.scenario.approver
        if result.status == "awaiting_approval" and approver is not None:
            deciding = decide_until_final(target.sessions, session_id, result.message_id, approver)
            result = await asyncio.wait_for(deciding, timeout=job.timeout_s)
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        result = None
        await _stop(target.sessions, session_id, job.timeout_s)
    latency_ms = int((time.monotonic() - started) * 1000)
    transcript = [m.message for m in await target.store.read(session_id)]
    snapshot = await target.workspace.snapshot(session_id)
    trace = Trace(
        status=result.status if result else "timeout",
        reply=result.reply if result else None,
        tool_calls=[(t.name, t.ok, t.error_codes) for t in result.tool_calls] if result else [],
        transcript=transcript,
        draft=snapshot.draft,
        error_code=result.error.code if result and result.error else None,
        session_id=session_id,
        output=result.output if result else None,
        audit=[
            (a.op, a.actor) for a in await target.workspace.audit(session_id) if a.target == "tool"
        ],
    )
    problems = job.scenario.check(trace)
    return RunRecord(
        model=job.model,
        provider=job.provider,
        profile=job.profile,
        strategy=job.strategy,
        fallback=job.fallback,
        scenario=job.scenario.name,
        entry=job.scenario.entry,
        trial=job.trial,
        tool_scenario=job.scenario.uses_tools,
        ok=not problems,
        failure=classify(result, trace, problems, job),
        problems=problems,
        latency_ms=latency_ms,
        turns=result.turns if result else 0,
        tool_calls=len(trace.tool_calls),
        status=trace.status,
        error_code=trace.error_code,
        session_id=session_id,
        recoveries=list(result.recoveries) if result else [],
        prompt_tokens=result.usage.input_tokens if result else 0,
        cached_prompt_tokens=result.usage.cached_tokens if result else 0,
    )


async def _stop(sessions: SessionClient, session_id: str, timeout_s: float) -> None:
    """Terminate a session that ran out of time, so its retries stop competing with the
    next runs for the model (a local server answers one request at a time)."""
    handle = sessions.client.get_workflow_handle(names.session_workflow_id(session_id))
    with contextlib.suppress(RPCError):
        await handle.terminate(f"eval run exceeded {timeout_s:.0f}s")


async def run_jobs(
    jobs: Sequence[Job],
    target: EvalTarget,
    *,
    parallel: int = 1,
    on_record: Callable[[RunRecord], None] | None = None,
) -> list[RunRecord]:
    """Run ``jobs`` with at most ``parallel`` sessions in flight (concurrent workflows)."""
    gate = asyncio.Semaphore(max(1, parallel))

    async def one(job: Job) -> RunRecord:
        async with gate:
            record = await run_job(job, target)
        if on_record is not None:
            on_record(record)
        return record

    tasks: list[Awaitable[RunRecord]] = [one(job) for job in jobs]
    return list(await asyncio.gather(*tasks))
