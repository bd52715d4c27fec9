"""One user message's tool loop, run inside the session workflow.

LLM activity -> checks -> tool activities -> repeat, until a final assistant message,
``max_turns`` or a failure. Everything here is deterministic workflow code.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, TimeoutError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import (
        AppendItem,
        LlmTurnInput,
        LlmTurnOutput,
        ToolRunInput,
        ToolRunOutput,
        TranscriptRef,
        WriteMessagesInput,
    )
    from durable_loop.core.activity_refs import LLM_TURN, WRITE_MESSAGES
    from durable_loop.core.approvals import ToolCallDecided
    from durable_loop.core.circuit import CircuitBreaker
    from durable_loop.core.config import SessionSettings, ToolUseMode
    from durable_loop.core.contracts import ParkedMessage, RunResult, TailEntry, ToolOutcome
    from durable_loop.core.dedup import dedupe_plan, record_result
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision, call_key, plan_turn
    from durable_loop.core.messages import Message, Usage
    from durable_loop.core.outcome import failure_text, judge_final, preview
    from durable_loop.core.recoveries import Action
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
from durable_loop.workflows.model_routing import ModelRouter, budget_error, over_budget_plan
from durable_loop.workflows.proposals import ProposalBook
from durable_loop.workflows.reply_guard import ReplyGuard
from durable_loop.workflows.run_control import (
    CANCELLED_NOTE,
    MessageCancelled,
    RunControl,
    cancelled,
)
from durable_loop.workflows.session_cursor import SessionCursor
from durable_loop.workflows.sub_agent_calls import run_sub_agent
from durable_loop.workflows.sub_agent_children import SubAgentChildren
from durable_loop.workflows.tool_placement import heartbeat_timeout, run_tool_activity
from durable_loop.workflows.typed_answers import TypedAnswer


class MessageLoop:
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
        self.last_ok_by_tool: dict[str, bool] = {}
        self.outcome_by_seq: dict[int, tuple[bool, list[str], str | None]] = {}
        """Result seq -> (ok, error codes, one-line failure for a retry prompt)."""
        self.deduplicated: set[int] = set()
        self.tools_off = False
        self.require_tool_call = False
        """The next request asks for a tool call (tool_choice "required"): the retry turn."""
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
            self.config, self.registered, self.visible if self._send_tools_configured() else []
        )
        self.repairs = ArgumentRepairs(session_id, settings, registered)

    # ------------------------------------------------------------------ driver

    async def run(self, text: str) -> RunResult:
        # Notes on decided proposals go before the person's new message (a model answers
        # the last user message). Only the order of the next llm_turn's appends changes,
        # not a command: histories recorded before replay (tests/versioning).
        await self._append_outcome_notes()
        self._append(Message.user(text))
        self.reply_guard.facts.request_text = text
        return await self._drive()

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
                provider_normalization=self.config.provider_normalization,
                stream=self.config.stream_replies,
                output_schema=self.typed.schema if self.typed else None,
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

    # ------------------------------------------------------------------ tools

    async def _run_tools(self, out: LlmTurnOutput) -> None:
        plan = plan_turn(
            out.tool_calls,
            registered=self.registered,
            visible=set(self.visible),
            tools_sent=self._send_tools(),
            config=self.config,
            seen_calls=self.seen_calls,
            first_result_seq=self.cursor.take_seq(len(out.tool_calls)),
        )
        plan = over_budget_plan(plan, self.config, self.cursor.usage)
        plan, deduplicated = dedupe_plan(plan, self.specs, self.cursor.dedup)
        self.deduplicated |= deduplicated
        self.result.ignored_tool_calls += plan.ignored
        to_run = [d for d in plan.decisions if d.action == "execute"]
        held = await self.held.hold(to_run, out.assistant_seq)
        to_run = [d for d in to_run if d.action == "execute" and d.result_seq not in held]
        by_seq = await self._execute_all(out.assistant_seq, to_run)
        held |= await self.held.hold_in_doubt(to_run, by_seq, out.assistant_seq)
        for decision in plan.decisions:
            if decision.result_seq not in held:
                self._record(decision, by_seq.get(decision.result_seq))
        if plan.repeated:
            self.tools_off = True
        await self._repair_arguments(out.assistant_seq, plan.decisions)
        if plan.repeated and (action := self.reply_guard.after_repeat(self.result)) is not None:
            self._take(action)

    async def _repair_arguments(self, assistant_seq: int, decisions: list[CallDecision]) -> None:
        """A named recovery re-issues a refused call with repaired arguments (see
        workflows/argument_repair)."""
        due = self.repairs.due(decisions, self.outcome_by_seq)
        if due is None:
            return
        repaired = await self.repairs.run(
            due=due,
            assistant_seq=assistant_seq,
            repair_seq=self.cursor.take_seq(),
            turn=self.cursor.turn_index,
            control=self.control,
            retry=retry_policy(self.settings.llm.retry, LLM_NON_RETRYABLE),
        )
        if repaired is None:
            return
        self.result.recoveries.append(due[1])
        self._spend(repaired.usage)
        if repaired.tool_calls:
            await self._run_tools(
                LlmTurnOutput(assistant_seq=repaired.assistant_seq, tool_calls=repaired.tool_calls)
            )

    async def _execute_all(
        self,
        assistant_seq: int,
        to_run: list[CallDecision],
        approved: dict[int, ToolCallDecided] | None = None,
    ) -> dict[int, ToolRunOutput]:
        """Run the calls (concurrently unless configured otherwise); result seq -> output."""
        approved = approved or {}
        runs = (self._execute(assistant_seq, d, approved.get(d.result_seq)) for d in to_run)
        if self.config.runs_tools_concurrently():
            results = await asyncio.gather(*runs)
        else:
            results = [await run for run in runs]
        return {r.result_seq: r for r in results}

    async def _execute(
        self, assistant_seq: int, decision: CallDecision, approved: ToolCallDecided | None = None
    ) -> ToolRunOutput:
        call = decision.call
        spec = self.specs[call.name]
        if spec.sub_agent:
            return await run_sub_agent(self, assistant_seq, decision, approved)
        timeout_s = spec.timeout_s or self.config.retries.tool_timeout_s
        retry = spec.retry or self.config.retries.tool_retry
        inp = ToolRunInput(
            session_id=self.session_id,
            workflow_id=workflow.info().workflow_id,
            turn=self.cursor.turn_index,
            assistant_seq=assistant_seq,
            call_index=call.index,
            call_id=call.id,
            name=call.name,
            result_seq=decision.result_seq,
            max_output_bytes=self.config.max_tool_output_bytes,
            timeout_s=timeout_s,
            max_attempts=retry.maximum_attempts,
            inline_bytes=self.config.history.inline_bytes,
            workspace_id=self.settings.workspace.workspace_id or self.session_id,
            ignore_implicit_args=self.config.ignore_implicit_arguments,
            arguments=approved.arguments if approved else None,
            edited_fields=approved.edited_fields if approved else [],
            approved_by=approved.decided_by if approved else None,
            approval_comment=approved.comment if approved else None,
            doubt_to_person=self.held.settles_doubt,
            rerun=approved.rerun if approved else 0,
        )
        run = run_tool_activity(
            spec, inp, timeout_s=timeout_s, retry=retry_policy(retry), config=self.config
        )
        try:
            return await self.control.guard(run)
        except MessageCancelled:
            reason = self.control.reason or "cancelled"
            message = f"tool {call.name!r} was cancelled: its message was {reason}"
            return self._failed_call(decision, ErrorCode.TOOL_CALL_CANCELLED, message)
        except ActivityError as err:
            timed_out = isinstance(err.cause, TimeoutError)
            if timed_out and spec.effect == "once" and self.held.settles_doubt:
                return self.held.timed_out_in_doubt(decision, failure_of(err).message)
            code = ErrorCode.TOOL_TIMEOUT if timed_out else ErrorCode.TOOL_ERROR
            message = f"tool {call.name!r} failed: {failure_of(err).message}"
            return self._failed_call(decision, code, message)

    def _failed_call(self, decision: CallDecision, code: ErrorCode, message: str) -> ToolRunOutput:
        """The call's result when its activity gave none: the workflow writes the envelope."""
        call = decision.call
        envelope = Envelope.failure(code, message)
        self.appends.append(
            AppendItem(
                seq=decision.result_seq,
                message=Message.tool_result(call.id, call.name, envelope),
            )
        )
        return ToolRunOutput(
            result_seq=decision.result_seq,
            call_id=call.id,
            name=call.name,
            ok=False,
            error_codes=[code],
        )

    def _record(self, decision: CallDecision, ran: ToolRunOutput | None) -> None:
        call = decision.call
        if decision.action == "execute" and ran is not None:
            ok, codes = ran.ok, ran.error_codes
            failure = None if ok else failure_text(codes, ran.preview)
            text = ran.preview
            if ran.proposal is not None and self.proposals is not None:
                self.proposals.add(ran.proposal, turn=self.cursor.turn_index, call_id=call.id)
            self.seen_calls[call_key(call.name, call.args_sha256)] = decision.result_seq
            if ok and self.specs[call.name].dedupe:
                record_result(self.cursor.dedup, call.name, call.args_sha256, decision.result_seq)
        elif decision.action == "reuse" and decision.reuse_seq is not None:
            dedupe = decision.result_seq in self.deduplicated
            self.appends.append(
                AppendItem(
                    seq=decision.result_seq,
                    copy_result_from=decision.reuse_seq,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    dedupe=dedupe,
                )
            )
            ok, codes, failure = self.outcome_by_seq.get(decision.reuse_seq, (True, [], None))
            text = "deduplicated" if dedupe else "reused"
        else:
            error = decision.error or CodedError(code=ErrorCode.TOOL_ERROR, message="refused")
            envelope = Envelope(ok=False, errors=[error])
            self.appends.append(
                AppendItem(
                    seq=decision.result_seq,
                    message=Message.tool_result(call.id, call.name, envelope),
                )
            )
            ok, codes, text = False, [error.code], error.message
            failure = failure_text(codes, text)
        self.outcome_by_seq[decision.result_seq] = (ok, codes, failure)
        if decision.action != "reuse":
            self.reply_guard.facts.note_result(call.name, text if failure is None else failure)
        self.reply_guard.facts.note_outcome(call.name, codes, failure)
        if not decision.ignored and call.name in self.registered:
            self.last_ok_by_tool[call.name] = ok
        self.result.tool_calls.append(
            ToolOutcome(
                turn=self.cursor.turn_index,
                call_id=call.id,
                name=call.name,
                ok=ok,
                error_codes=codes,
                executed=decision.action == "execute" and ran is not None and ran.executed,
                reused=decision.action == "reuse",
                deduplicated=decision.result_seq in self.deduplicated,
                after_cancel=ran is not None and ran.after_cancel,
            )
        )
        self._remember(decision.result_seq, "tool", text, [call.name])

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
