"""The tool half of a turn in a message's loop: plan the model's calls, hold the ones a
person must approve, run the rest as activities (or sub-agents), record every result.

Mixed into :class:`~durable_loop.workflows.tool_loop.MessageLoop`, whose driver calls
:meth:`ToolTurn._run_tools` after an LLM turn that asked for tools; resuming a parked
message runs the approved calls through :meth:`ToolTurn._execute_all` and
:meth:`ToolTurn._record` (see approval_turns).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from temporalio import workflow
from temporalio.exceptions import ActivityError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import (
        AppendItem,
        LlmTurnOutput,
        ToolRunInput,
        ToolRunOutput,
    )
    from durable_loop.core.approvals import ToolCallDecided
    from durable_loop.core.config import RuntimeConfig, SessionSettings
    from durable_loop.core.contracts import RunResult, ToolOutcome
    from durable_loop.core.dedup import dedupe_plan, record_result
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.guards import CallDecision, call_key, plan_turn
    from durable_loop.core.messages import Message, Usage
    from durable_loop.core.outcome import failure_text
    from durable_loop.core.recoveries import Action
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.activity_calls import LLM_NON_RETRYABLE, failure_of, retry_policy
from durable_loop.workflows.approval_turns import HeldCalls
from durable_loop.workflows.argument_repair import ArgumentRepairs
from durable_loop.workflows.model_routing import over_budget_plan
from durable_loop.workflows.proposals import ProposalBook
from durable_loop.workflows.reply_guard import ReplyGuard
from durable_loop.workflows.run_control import MessageCancelled, RunControl
from durable_loop.workflows.session_cursor import SessionCursor
from durable_loop.workflows.sub_agent_calls import run_sub_agent
from durable_loop.workflows.sub_agent_children import SubAgentChildren
from durable_loop.workflows.tool_placement import run_tool_activity


class ToolTurn:
    """The tool calls of one assistant turn, run and recorded for the message's loop."""

    session_id: str
    settings: SessionSettings
    config: RuntimeConfig
    cursor: SessionCursor
    control: RunControl
    children: SubAgentChildren
    proposals: ProposalBook | None
    held: HeldCalls
    result: RunResult
    appends: list[AppendItem]
    seen_calls: dict[str, int]
    refused_unknown: dict[str, int]
    last_ok_by_tool: dict[str, bool]
    outcome_by_seq: dict[int, tuple[bool, list[str], str | None]]
    deduplicated: set[int]
    tools_off: bool
    registered: set[str]
    specs: dict[str, ToolSpec]
    visible: list[str]
    reply_guard: ReplyGuard
    repairs: ArgumentRepairs
    _send_tools: Callable[[], bool]
    _take: Callable[[Action], None]
    _spend: Callable[[Usage], None]
    _remember: Callable[[int, str, str | None, list[str] | None], None]

    async def _run_tools(self, out: LlmTurnOutput) -> None:
        plan = plan_turn(
            out.tool_calls,
            registered=self.registered,
            visible=set(self.visible),
            tools_sent=self._send_tools(),
            config=self.config,
            seen_calls=self.seen_calls,
            first_result_seq=self.cursor.take_seq(len(out.tool_calls)),
            patched=workflow.patched,
            refused_unknown=self.refused_unknown,
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
        if plan.repeated or plan.unasked is not None:
            self.tools_off = True
        await self._repair_arguments(out.assistant_seq, plan.decisions)
        action = None
        if plan.repeated:
            made_up = any(d.made_up for d in plan.decisions)
            action = self.reply_guard.after_repeat(out, made_up, self.result)
        if action is None and plan.unasked is not None and plan.unasked_by is not None:
            action = self.reply_guard.after_unasked(plan.unasked.call, plan.unasked_by, self.result)
        elif action is None and not held and not self.tools_off and plan.decisions:
            ok = all(self.outcome_by_seq[d.result_seq][0] for d in plan.decisions)
            action = self.reply_guard.after_results(out, ok, self.result)
        if action is not None:
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
            offered=self.visible if self.reply_guard.wants_request_left else None,
        )
        if repaired is None:
            return
        self.result.recoveries.append(due[1])
        self._spend(repaired.usage)
        if repaired.tool_calls:
            await self._run_tools(
                LlmTurnOutput(
                    assistant_seq=repaired.assistant_seq,
                    tool_calls=repaired.tool_calls,
                    request_left=repaired.request_left,
                )
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
            if error.code == ErrorCode.TOOL_NOT_FOUND:
                self.refused_unknown[call_key(call.name, call.args_sha256)] = decision.result_seq
        self.outcome_by_seq[decision.result_seq] = (ok, codes, failure)
        if decision.action != "reuse":
            self.reply_guard.facts.note_result(call.name, text if failure is None else failure)
        # A made-up tool's repeat is answered with the tools withdrawn: the words that
        # follow are the answer, not a reply to send back to the tools (retry_after_tool_error).
        settled = decision.action == "reuse" and ErrorCode.TOOL_NOT_FOUND in codes
        self.reply_guard.facts.note_outcome(call.name, codes, None if settled else failure)
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
