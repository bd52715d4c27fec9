"""Running a call of an ``effect="once"`` tool: never its body twice without knowing.

Before the body runs, the attempt is marked in the store (:mod:`durable_loop.store.
tool_attempts`). An attempt that finds a marker left by an earlier one, and no result, knows
that attempt died inside the body (a worker killed, an activity timeout): the effect may or
may not have happened. It asks the tool's ``reconcile`` function, if the tool has one:
"it happened" makes its result the call's result, "it did not" runs the body now. A
``reconcile`` that raises is retried with the activity; without one, or when it fails on the
last attempt, the call ends ``TOOL_CALL_IN_DOUBT`` and the body is not run again.

Under patch ``in-doubt-to-person`` the workflow puts such a call to a person; their "run it
again" comes back as ``rerun`` = n, and that run marks itself under a key of its own
(:func:`marker_key`), so it runs the body once despite the earlier marker, and its own death
puts the call in doubt again rather than letting a retry run it a third time.

First settlement wins (:meth:`ToolAttempts.settle`): a body's result is stored only if its
attempt settles the call first. A call put in doubt is settled by no body (the retry that
found the marker, the attempt whose tool timeout passed, a person's "run it again" for the
run before, an attempt that learns its activity timed out on the server), so a body that
ignored its timeout and returns after that has its result discarded: what the model reads
is the person's answer, as the audit says. The person's answer settles the call too (the
decision-audit activity, :mod:`durable_loop.activities.workspace`), so a body that returns
after it loses even while its worker does not know yet that its activity timed out. A
discarded body leaves a log line and an audit row (op ``discard``: when it finished, who had
settled the call; never its result).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from temporalio import activity

from durable_loop.activities.dispatch import (
    Dispatched,
    bound_output,
    parse_arguments,
    to_envelope,
    with_warning,
)
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import RegisteredTool, ToolContext
from durable_loop.store.tool_attempts import NO_BODY, ToolAttempts, settlement
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.store.workspace_decision_audit import DiscardedBody, record_discarded_body

log = logging.getLogger(__name__)

DEADLINE_MARGIN_S = 1.0
"""A body that returns this close to its activity's deadline is late: the result might not
reach the server in time, and the worker's clock started a little after the server's."""

RECONCILED_WARNING = (
    "an earlier attempt of this call stopped inside the tool; the tool's reconcile check "
    "found that its effect happened: this is that result (the tool did not run again)"
)


def in_doubt(name: str, prior: int, why: str) -> Dispatched:
    message = (
        f"whether {name!r} took effect is unknown: attempt {prior} stopped inside the tool "
        f"({why}) and it was not run again, so it is not done twice. Do not call it again "
        "without asking the user; tell them what you know."
    )
    return Dispatched(Envelope.failure(ErrorCode.TOOL_CALL_IN_DOUBT, message), 0, True, True)


def marker_key(idempotency_key: str, rerun: int) -> str:
    """The attempt marker of a call's ``rerun``-th run a person allowed (0: the first)."""
    return idempotency_key if rerun == 0 else f"{idempotency_key}:rerun{rerun}"


def timed_out(done: Dispatched) -> bool:
    return any(e.code == ErrorCode.TOOL_TIMEOUT for e in done.envelope.errors)


def activity_gone() -> bool:
    """The server said it no longer waits for this attempt (it timed out there): what its
    body returns now is late. A timed-out activity is not always told so, hence also
    :func:`past_deadline`."""
    details = activity.cancellation_details()
    return details is not None and (details.timed_out or details.not_found)


def past_deadline(began: float) -> bool:
    """The attempt's start-to-close timeout passed (within :data:`DEADLINE_MARGIN_S`),
    measured on this worker's clock from before the body: the server's may have skipped."""
    timeout = activity.info().start_to_close_timeout
    if timeout is None:
        return False
    return time.monotonic() - began >= timeout.total_seconds() - DEADLINE_MARGIN_S


def log_discarded(ctx: ToolContext, why: str) -> None:
    log.warning(
        "once call %s, attempt %d: the body finished late (%s): it may have taken effect, "
        "but its result is discarded: the call is in doubt, for a person to settle",
        ctx.idempotency_key,
        ctx.attempt,
        why,
    )


class OnceCalls:
    def __init__(self, attempts: ToolAttempts, audit: WorkspaceStore | None = None) -> None:
        """``audit``: where discarded bodies are audited (default: the attempts' database)."""
        self.attempts = attempts
        self.audit = audit or WorkspaceStore(attempts.db)

    async def run(
        self,
        tool: RegisteredTool,
        raw_arguments: str,
        ctx: ToolContext,
        body: Callable[[], Awaitable[Dispatched]],
        last_attempt: bool,
        max_output_bytes: int,
        rerun: int = 0,
    ) -> Dispatched | None:
        """The call's result; None when the call was settled without this body (its result
        came too late and is discarded: nothing is to be stored)."""
        key = marker_key(ctx.idempotency_key, rerun)
        if rerun > 0:  # a person answered for the run before: its late body must not count
            await self._settle_without_body(marker_key(ctx.idempotency_key, rerun - 1), ctx)
        prior = await self.attempts.begin(
            key, session_id=ctx.session_id, call_id=ctx.call_id, attempt=ctx.attempt
        )
        if prior is not None:
            settled = await self._settle(
                tool, raw_arguments, ctx, prior, last_attempt, max_output_bytes
            )
            if settled is not None:
                await self._settled_by(key, ctx, NO_BODY if settled.in_doubt else ctx.attempt)
                return settled
            await self.attempts.renew(key, ctx.attempt)
        began = time.monotonic()
        try:
            done = await body()
        except Exception:  # the tool raised: it said it failed, so a retry may run it again
            await self.attempts.end(key)
            raise
        finished = datetime.now(UTC)
        if timed_out(done):  # the body may run on in its thread: whether it took effect is unknown
            await self._settle_without_body(key, ctx)
            why = "it did not finish within the tool's timeout"
            return in_doubt(tool.spec.name, ctx.attempt, why)
        if past_deadline(began) or activity_gone():
            await self._settle_without_body(key, ctx)
            await self._discarded(tool, ctx, key, finished, "after its activity timed out")
            return in_doubt(tool.spec.name, ctx.attempt, "it finished after its activity timed out")
        if await self._settled_by(key, ctx, ctx.attempt):
            return done
        await self._discarded(tool, ctx, key, finished, "after the call was settled")
        return None

    async def _discarded(
        self, tool: RegisteredTool, ctx: ToolContext, key: str, finished: datetime, why: str
    ) -> None:
        """The log line and the audit row of a body whose result is discarded. The row is
        best effort: failing the activity now would not bring the result back."""
        log_discarded(ctx, why)
        body = DiscardedBody(
            workspace_id=ctx.workspace_id or ctx.session_id,
            session_id=ctx.session_id,
            call_id=ctx.call_id,
            turn=ctx.turn,
            tool=tool.spec.name,
            attempt=ctx.attempt,
            finished_at=finished,
            settled_by=settlement(await self.attempts.settled_by(key)),
            why=why,
            key=f"tool-discarded:{key}:{ctx.attempt}",
        )
        try:
            await record_discarded_body(self.audit, body)
        except Exception:
            log.exception("once call %s: auditing its discarded body failed", key)

    async def _settle_without_body(self, key: str, ctx: ToolContext) -> bool:
        return await self._settled_by(key, ctx, NO_BODY)

    async def _settled_by(self, key: str, ctx: ToolContext, by: int) -> bool:
        return await self.attempts.settle(
            key, session_id=ctx.session_id, call_id=ctx.call_id, by=by
        )

    async def _settle(
        self,
        tool: RegisteredTool,
        raw_arguments: str,
        ctx: ToolContext,
        prior: int,
        last_attempt: bool,
        max_output_bytes: int,
    ) -> Dispatched | None:
        """The call's result when an earlier attempt died in the body; None: run it now."""
        name = tool.spec.name
        if tool.reconcile is None:
            return in_doubt(name, prior, "the tool has no reconcile check")
        arguments = parse_arguments(raw_arguments)
        if isinstance(arguments, Envelope):
            return in_doubt(name, prior, "its arguments cannot be read")
        try:
            found = await tool.reconciled(arguments, ctx)
        except Exception as err:
            if not last_attempt:
                raise
            return in_doubt(name, prior, f"its reconcile check failed: {type(err).__name__}: {err}")
        if not found.happened:
            return None
        envelope, size = bound_output(to_envelope(found.result), max_output_bytes)
        return Dispatched(with_warning(envelope, RECONCILED_WARNING), size, True)
