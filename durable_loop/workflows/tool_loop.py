"""One user message's tool loop, run inside the session workflow.

LLM activity -> checks -> tool activities -> repeat, until a final assistant message,
``max_turns`` or a failure. Everything here is deterministic workflow code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import (
        AppendItem,
        LlmTurnInput,
        LlmTurnOutput,
        TranscriptRef,
        WriteMessagesInput,
    )
    from durable_loop.core.activity_refs import LLM_TURN, WRITE_MESSAGES
    from durable_loop.core.circuit import CircuitBreaker
    from durable_loop.core.config import SessionSettings, ToolUseMode
    from durable_loop.core.contracts import ParkedMessage, RunResult, TailEntry
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.messages import Message, Usage
    from durable_loop.core.outcome import judge_final, preview
    from durable_loop.core.recoveries import Action
    from durable_loop.core.recoveries.withhold_tools_from_conversation import NAME as GATE
    from durable_loop.core.recoveries.withhold_tools_from_conversation import (
        WithholdToolsFromConversation,
    )
    from durable_loop.core.tools import ToolCatalog, visible_tool_names

from durable_loop.workflows.activity_calls import (
    LLM_NON_RETRYABLE,
    failure_of,
    retry_policy,
    run_activity,
    run_local_activity,
)
from durable_loop.workflows.approval_turns import HeldCalls
from durable_loop.workflows.approvals import ApprovalBook
from durable_loop.workflows.argument_repair import ArgumentRepairs
from durable_loop.workflows.context_summary import ContextSummaries
from durable_loop.workflows.conversation_gate import ask_gate, gate_settings
from durable_loop.workflows.model_routing import ModelRouter, budget_error
from durable_loop.workflows.proposals import ProposalBook
from durable_loop.workflows.reply_guard import ReplyGuard
from durable_loop.workflows.run_control import (
    CANCELLED_NOTE,
    MessageCancelled,
    RunControl,
    cancelled,
)
from durable_loop.workflows.session_cursor import SessionCursor
from durable_loop.workflows.sub_agent_children import SubAgentChildren
from durable_loop.workflows.tool_placement import heartbeat_timeout
from durable_loop.workflows.tool_turn import ToolTurn
from durable_loop.workflows.typed_answers import TypedAnswer


class MessageLoop(ToolTurn):
    can_park = True
    """Whether a message can wait for tool calls a person must approve (see HeldCalls)."""

    def __init__(
        self,
        *,
        session_id: str,
        settings: SessionSettings,
        catalog: ToolCatalog,
        cursor: SessionCursor,
        message_id: str,
        proposals: ProposalBook | None = None,
        approvals: ApprovalBook | None = None,
        control: RunControl | None = None,
        children: SubAgentChildren | None = None,
    ) -> None:
        self.session_id = session_id
        self.control = control or RunControl()
        self.children = children or SubAgentChildren()
        self.proposals = proposals
        self.held = HeldCalls(self, approvals)
        self.settings = settings
        self.config = settings.runtime
        self.catalog = catalog
        self.cursor = cursor
        self.result = RunResult(message_id=message_id, status="completed")
        self.appends: list[AppendItem] = []
        self.seen_calls: dict[str, int] = {}
        self.refused_unknown: dict[str, int] = {}
        """``name:args_sha256`` of calls refused with TOOL_NOT_FOUND -> their result seq."""
        self.last_ok_by_tool: dict[str, bool] = {}
        self.outcome_by_seq: dict[int, tuple[bool, list[str], str | None]] = {}
        """Result seq -> (ok, error codes, one-line failure for a retry prompt)."""
        self.deduplicated: set[int] = set()
        self.tools_off = False
        self.require_tool_call = False
        """The next request asks for a tool call (tool_choice "required"): the retry turn."""
        self.gate: WithholdToolsFromConversation | None = None
        """The conversation gate's settings when this message asks it (see run)."""
        self.gate_pending: tuple[int, str] | None = None
        """(seq, text) of the person's message until the conversation gate has seen it."""
        self.typed: TypedAnswer | None = None
        """The message's output schema, set by the session (see typed_answers)."""
        self.fallbacks_left = self.config.retries.fallback_retry_count
        self.router = ModelRouter(
            settings, CircuitBreaker(self.config.retries.circuit_breaker, cursor.breaker)
        )
        self.summaries = ContextSummaries(session_id, self.config, cursor)
        registered = catalog.by_name()
        self.registered = set(registered)
        self.specs = registered
        self.visible = visible_tool_names(
            catalog, self.config.tool_allowlist, self.config.tool_denylist
        )
        self.reply_guard = ReplyGuard(
            self.config,
            self.registered,
            self.visible if self._send_tools_configured() else [],
            {name: spec.description for name, spec in registered.items()},
        )
        self.repairs = ArgumentRepairs(session_id, settings, registered)

    # ------------------------------------------------------------------ driver

    async def run(self, text: str) -> RunResult:
        # Notes on decided proposals go before the person's new message (a model answers
        # the last user message). Only the order of the next llm_turn's appends changes,
        # not a command: histories recorded before replay (tests/versioning).
        self.gate = gate_settings(self.config)
        await self._append_outcome_notes()
        self.gate_pending = (self._append(Message.user(text)), text)
        self.reply_guard.facts.request_text = text
        return await self._drive()

    async def _gate(self, user_seq: int, text: str) -> None:
        """Recovery ``withhold_tools_from_conversation`` (see conversation_gate)."""
        if self.gate is None or not self._send_tools():
            return
        answer = await ask_gate(
            session_id=self.session_id,
            user_seq=user_seq,
            turn=self.cursor.turn_index,
            endpoint=self.settings.llm,
            question=text,
            specs=[self.specs[name] for name in self.visible if name in self.specs],
            settings=self.gate,
            config=self.config,
            control=self.control,
        )
        if isinstance(answer, str):
            self.result.warnings.append(answer)
            return
        self._spend(answer.usage)
        self.reply_guard.facts.routed_tool = answer.routed_tool
        if answer.conversation:
            self.tools_off = True
            self.result.recoveries.append(GATE)

    async def resume(self, parked: ParkedMessage) -> RunResult:
        """Continue a message parked on held tool calls, now that all are decided."""
        try:
            await self.held.resume(parked)
        except BaseException:
            await self._flush()
            raise
        if self.held.parked is not None:  # a call run again is in doubt again
            await self._flush()
            return self.held.interim()
        return await self._drive()

    async def _drive(self) -> RunResult:
        try:
            if self.gate_pending is not None:
                user_seq, text = self.gate_pending
                self.gate_pending = None
                await self._gate(user_seq, text)
            while True:
                if self.control.reason is not None:
                    return self._cancelled(self.control.reason)
                if self.result.turns >= self.config.max_turns:
                    return self._fail(
                        ErrorCode.MAX_TURNS, f"no final answer after {self.config.max_turns} turns"
                    )
                out = await self._llm_turn()
                if out is None:
                    return self.result
                if out.tool_calls:
                    await self._run_tools(out)
                    if self.held.parked is not None:
                        return self.held.interim()
                    continue
                if self.control.reason is not None:
                    continue  # a reply that arrived after the cancel: ends above
                action = self.reply_guard.judge(out, self.result, self.typed)
                if action is None:
                    return await self._finish(out)
                if action.error is not None:
                    return self._fail(action.error.code, action.error.message)
                self._take(action)
        except MessageCancelled:
            return self._cancelled(self.control.reason or "cancelled")
        finally:
            await self._flush()

    def _take(self, action: Action) -> None:
        """Carry out what a recovery decided (see reply_guard)."""
        if action.tools_off is not None:
            self.tools_off = action.tools_off
        self.require_tool_call = action.require_tool_call
        self._append(Message.user(action.prompt, synthetic=True))

    def turn(self) -> int:
        return self.cursor.turn_index

    def _append(self, message: Message) -> int:
        seq = self.cursor.take_seq()
        self.appends.append(AppendItem(seq=seq, message=message))
        self._remember(seq, message.role, message.content)
        return seq

    def _remember(
        self, seq: int, role: str, text: str | None, tools: list[str] | None = None
    ) -> None:
        entry = TailEntry(seq=seq, role=role, preview=preview(text), tool_names=tools or [])
        self.cursor.remember(entry, self.config.history.transcript_tail)

    async def _flush(self) -> None:
        if not self.appends:
            return
        pending, self.appends = self.appends, []
        await run_local_activity(
            WRITE_MESSAGES,
            WriteMessagesInput(session_id=self.session_id, appends=pending),
            start_to_close_timeout=timedelta(seconds=30),
        )

    # ------------------------------------------------------------------ LLM

    def _send_tools_configured(self) -> bool:
        """Whether this message may offer tools at all (whatever a guard turned off)."""
        return self.config.tool_use_mode is not ToolUseMode.DISABLED and bool(self.visible)

    def _send_tools(self) -> bool:
        return (
            self.config.tool_use_mode is not ToolUseMode.DISABLED
            and not self.tools_off
            and bool(self.visible)
        )

    async def _append_outcome_notes(self) -> None:
        """Outcomes of proposals decided since the model last read (see ProposalBook)."""
        for note in await self.proposals.before_llm_turn() if self.proposals else []:
            self._append(Message.user(note, synthetic=True))

    async def _llm_turn(self) -> LlmTurnOutput | None:
        await self._append_outcome_notes()
        while True:
            over_budget = budget_error(self.config, self.cursor.usage)
            if over_budget is not None:
                self._fail(over_budget.code, over_budget.message)
                return None
            self._spend(await self.summaries.run_if_due(self.settings.llm, self.cursor.take_seq))
            send_tools = self._send_tools()
            assistant_seq = self.cursor.take_seq()
            self.cursor.turn_index += 1
            self.result.turns += 1
            self.result.session_turns.append(self.cursor.turn_index)
            endpoint = self.settings.llm
            inp = LlmTurnInput(
                transcript=TranscriptRef(session_id=self.session_id, upto_seq=assistant_seq),
                turn=self.cursor.turn_index,
                appends=self.appends,
                assistant_seq=assistant_seq,
                endpoint=endpoint,
                tool_names=self.visible,
                send_tools=send_tools,
                tool_choice="required" if self.require_tool_call else self.config.tool_choice,
                parallel_tool_calls=self.config.parallel_tool_calls,
                request_overrides=self.config.request_overrides,
                system_prompt=self.settings.system_prompt,
                inline_bytes=self.config.history.inline_bytes,
                reply_inline_bytes=self.config.reply_inline_bytes,
                transforms=self.config.transform_set(),
                provider_normalization=self.config.transforms.provider_normalization,
                stream=self.config.stream_replies,
                output_schema=self.typed.schema if self.typed else None,
                max_tool_args_bytes=self.config.max_tool_args_bytes,
                wants_request_left=self.reply_guard.wants_request_left,
            )
            try:
                out = await self.router.run_turn(inp, self._call_llm, failure_of, self.result)
            except ActivityError as err:
                self.appends = []
                failure = failure_of(err)
                if self.fallbacks_left > 0 and self.config.tool_use_mode is ToolUseMode.RELAXED:
                    self.fallbacks_left -= 1
                    self.tools_off = True
                    continue
                self._fail(failure.code, failure.message)
                return None
            self.appends = []
            self.require_tool_call = False
            self._spend(out.usage)
            self.result.warnings += [w for w in out.warnings if w not in self.result.warnings]
            self.summaries.note(out)
            self._remember(assistant_seq, "assistant", out.text, [c.name for c in out.tool_calls])
            return out

    async def _call_llm(self, inp: LlmTurnInput) -> LlmTurnOutput:
        endpoint = inp.endpoint
        after = f" (fallback after {', '.join(inp.fallback_from)})" if inp.fallback_from else ""
        after += f" (circuit open: {', '.join(inp.circuit_open)})" if inp.circuit_open else ""
        call = run_activity(
            LLM_TURN,
            inp,
            start_to_close_timeout=timedelta(seconds=endpoint.timeout_s + 15),
            heartbeat_timeout=heartbeat_timeout(self.config),
            retry_policy=retry_policy(endpoint.retry, LLM_NON_RETRYABLE),
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"llm: {endpoint.model} turn {inp.turn}{after}",
        )
        return await self.control.guard(call)

    def _spend(self, usage: Usage) -> None:
        self.result.usage = self.result.usage + usage
        self.cursor.usage = self.cursor.usage + usage

    # ------------------------------------------------------------------ endings

    async def _finish(self, out: LlmTurnOutput) -> RunResult:
        self.result.reply = out.text
        self.result.reply_truncated = out.text_truncated
        self.result.reply_seq = out.assistant_seq
        verdict = judge_final(
            self.config,
            tool_calls_made=len(self.result.tool_calls),
            last_ok_by_tool=self.last_ok_by_tool,
        )
        if verdict is None and not (out.text or "").strip():
            verdict = CodedError(code=ErrorCode.EMPTY_FINAL, message="the final reply was empty")
        if verdict is not None:
            self.result.status = "failed"
            self.result.error = verdict
        return self.result

    def _cancelled(self, reason: str) -> RunResult:
        """End cancelled; every started call already has its result, and a note after the
        partial turn tells the model on the next message what was cut off."""
        self._append(Message.user(CANCELLED_NOTE.format(reason=reason), synthetic=True))
        self.result = cancelled(self.result, reason)
        return self.result

    def _fail(self, code: str, message: str) -> RunResult:
        self.result.status = "failed"
        self.result.error = CodedError(code=code, message=message)
        return self.result
