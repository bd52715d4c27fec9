"""Tool activities: the worker's tool catalog and the execution of one call."""

from __future__ import annotations

import functools
import time

from temporalio import activity

from durable_loop.activities.dispatch import Dispatched, dispatch, with_warning
from durable_loop.activities.heartbeat import heartbeating
from durable_loop.activities.once_calls import OnceCalls
from durable_loop.core import names
from durable_loop.core.activity_contracts import (
    ListToolsInput,
    ToolCatalogOutput,
    ToolRunInput,
    ToolRunOutput,
)
from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.reply_meta import ToolResultMeta
from durable_loop.store import TranscriptStore
from durable_loop.store.tool_attempts import ToolAttempts
from durable_loop.store.workspace import WorkspaceStore

AFTER_CANCEL_WARNING = "this result arrived after the call was cancelled"


def cancel_requested() -> bool:
    """Whether someone cancelled this activity (not a timeout or a worker shutting down)."""
    details = activity.cancellation_details()
    return details is not None and details.cancel_requested


def idempotency_key(workflow_id: str, call_id: str, result_seq: int) -> str:
    """Stable across retries and worker restarts; unique per call within a session."""
    return f"{workflow_id}:{call_id}:{result_seq}"


def arguments_of(inp: ToolRunInput, stored: str) -> str:
    """A person's edited arguments replace the ones the model sent."""
    return stored if inp.arguments is None else canonical_dumps(inp.arguments)


def approval_note(inp: ToolRunInput) -> str | None:
    """What the model reads about a person's approval: the values it ran with where they
    changed the model's arguments (its own call in the transcript still shows the old
    ones), and their comment."""
    who = f"a person ({inp.approved_by})" if inp.approved_by else "a person"
    notes: list[str] = []
    if inp.edited_fields:
        ran = inp.arguments or {}
        changed = {k: ran[k] for k in inp.edited_fields if k in ran}
        removed = [k for k in inp.edited_fields if k not in ran]
        text = f"{who} changed the arguments before the call ran; it ran with "
        text += f"{canonical_dumps(changed)} in place of your values"
        if removed:
            text += f" and without {', '.join(removed)}"
        notes.append(text)
    if inp.approval_comment:
        notes.append(f'{who} approved this call with a comment: "{inp.approval_comment}"')
    return "; ".join(notes) or None


class ToolActivities:
    def __init__(
        self, store: TranscriptStore, registry: ToolRegistry, audit: WorkspaceStore | None = None
    ) -> None:
        """``audit``: the workspace store whose audit shows a discarded late body (default:
        one on the transcript store's database, as the worker's default workspace store)."""
        self.store = store
        self.registry = registry
        self.once = OnceCalls(ToolAttempts(store.db, store.engine.dialect.name), audit)

    @activity.defn(name=names.LIST_TOOLS)
    async def list_tools(self, inp: ListToolsInput) -> ToolCatalogOutput:
        return ToolCatalogOutput(
            catalog=self.registry.catalog(), sub_agents=self.registry.sub_agents()
        )

    @activity.defn(name=names.RUN_TOOL)
    async def run_tool(self, inp: ToolRunInput) -> ToolRunOutput:
        # Beat from the start: the heartbeat timeout also runs before the first beat.
        async with heartbeating(inp.call_id):
            return await self._run_tool(inp)

    async def _run_tool(self, inp: ToolRunInput) -> ToolRunOutput:
        stored = await self.store.get_many(inp.session_id, [inp.result_seq, inp.assistant_seq])
        if inp.result_seq in stored:
            return summarize_result(stored[inp.result_seq], inp, cached=True)
        assistant = stored.get(inp.assistant_seq)
        calls = assistant.message.tool_calls if assistant else []
        ctx = tool_context(inp)
        started = time.monotonic()
        if inp.call_index >= len(calls):
            missing = Envelope.failure(ErrorCode.TOOL_ERROR, "call not in the store")
            done: Dispatched | None = Dispatched(missing, 0, False)
        else:
            done = await self._dispatched(
                inp, ctx, arguments_of(inp, calls[inp.call_index].arguments)
            )
        if done is None:  # a late once body: the call was settled without it
            return discarded_output(inp)
        if done.in_doubt and inp.doubt_to_person:
            return in_doubt_output(inp, done.envelope)
        duration_us = int((time.monotonic() - started) * 1_000_000)
        return await self._stored(inp, ctx, done, duration_us)

    async def _dispatched(self, inp: ToolRunInput, ctx: ToolContext, raw: str) -> Dispatched | None:
        """Run the call; an ``effect="once"`` tool's through :class:`OnceCalls` (None: its
        result came after the call was settled without it)."""
        tool = self.registry.get(inp.name)
        last_attempt = inp.max_attempts != 0 and ctx.attempt >= inp.max_attempts
        body = functools.partial(
            dispatch,
            tool,
            inp.name,
            raw,
            ctx,
            timeout_s=inp.timeout_s,
            max_output_bytes=inp.max_output_bytes,
            last_attempt=last_attempt,
            ignore_implicit=inp.ignore_implicit_args,
            outlast_cancel=inp.approved_by is not None,
        )
        if tool is not None and tool.spec.effect == "once":
            return await self.once.run(
                tool, raw, ctx, body, last_attempt, inp.max_output_bytes, inp.rerun
            )
        return await body()

    async def _stored(
        self, inp: ToolRunInput, ctx: ToolContext, done: Dispatched, duration_us: int
    ) -> ToolRunOutput:
        """Store the call's result at its seq (an earlier attempt's stored one stays)."""
        envelope = done.envelope
        note = approval_note(inp)
        if note:
            envelope = with_warning(envelope, note)
        late = cancel_requested()
        if late:
            envelope = with_warning(envelope, AFTER_CANCEL_WARNING)
        message = Message.tool_result(inp.call_id, inp.name, envelope)
        meta = ToolResultMeta(
            turn=inp.turn,
            duration_ms=duration_us // 1000,
            duration_us=duration_us,
            output_bytes=done.size,
            not_run=None if done.ran else True,
            attempt=ctx.attempt,
            idempotency_key=ctx.idempotency_key,
            after_cancel=late or None,
        )
        written = await self.store.put(inp.session_id, inp.result_seq, message, meta)
        return summarize_result(written, inp, cached=False)


def tool_context(inp: ToolRunInput) -> ToolContext:
    return ToolContext(
        session_id=inp.session_id,
        workflow_id=inp.workflow_id,
        call_id=inp.call_id,
        turn=inp.turn,
        attempt=activity.info().attempt,
        idempotency_key=idempotency_key(inp.workflow_id, inp.call_id, inp.result_seq),
        workspace_id=inp.workspace_id,
    )


def discarded_output(inp: ToolRunInput) -> ToolRunOutput:
    """What a late once body's activity answers (no one waits for it any more): nothing is
    stored, the call's result is the one that settled it."""
    return ToolRunOutput(
        result_seq=inp.result_seq,
        call_id=inp.call_id,
        name=inp.name,
        ok=False,
        error_codes=[ErrorCode.TOOL_CALL_IN_DOUBT],
        preview="the body finished after the call was settled without it; result discarded",
        in_doubt=True,
    )


def in_doubt_output(inp: ToolRunInput, envelope: Envelope) -> ToolRunOutput:
    """An in-doubt call for the workflow to put to a person: nothing is stored, so their
    answer can become the call's result."""
    return ToolRunOutput(
        result_seq=inp.result_seq,
        call_id=inp.call_id,
        name=inp.name,
        ok=False,
        error_codes=envelope.error_codes,
        preview=envelope.errors[0].message if envelope.errors else "",
        in_doubt=True,
    )


def summarize_result(stored: StoredMessage, inp: ToolRunInput, *, cached: bool) -> ToolRunOutput:
    envelope = stored.message.envelope or Envelope.failure(ErrorCode.TOOL_ERROR, "no envelope")
    content = envelope.to_content()
    preview = content if len(content) <= inp.inline_bytes else content[: inp.inline_bytes] + "…"
    meta = stored.meta_as(ToolResultMeta)
    return ToolRunOutput(
        result_seq=stored.seq,
        call_id=inp.call_id,
        name=inp.name,
        ok=envelope.ok,
        error_codes=envelope.error_codes,
        output_bytes=meta.output_bytes,
        preview=preview,
        duration_ms=meta.duration_ms,
        duration_us=meta.duration_us,
        cached=cached,
        proposal=envelope.proposal,
        executed=not meta.not_run,
        after_cancel=bool(meta.after_cancel),
    )
