"""The ``router`` loop strategy: router -> executor -> tool -> summarizer, for models with a
small context or unreliable native tool calling.

1. The router sees the tool *names* and answers ``{choice, tool, question}``.
2. If it chose a tool, the executor sees that one tool's schema and answers ``{tool, args}``.
3. The call runs exactly like a natively emitted one (masking, size and JSON guards,
   deduplication, placement, envelopes), because it goes through the tool loop's own code.
4. The summarizer (no tools) turns the result into the reply; ``none`` gets a direct answer
   and ``clarify`` replies with the router's question.

What to do after each model output is decided by the pure step ``core/router/step.py``
(which ``route-bench`` runs too); this workflow carries its actions out as activities and
answers its patch checks with ``workflow.patched``. Every step is an activity, so history
shows the route taken and the trace carries each step's latency.
"""

from __future__ import annotations

from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import AppendItem, LlmTurnOutput, ToolCallSummary
    from durable_loop.core.activity_refs import ROUTER_ANSWER, ROUTER_STEP
    from durable_loop.core.canonical_json import (
        arguments_fingerprint,
        canonical_dumps,
        utf8_len,
    )
    from durable_loop.core.config import ToolUseMode
    from durable_loop.core.contracts import RunResult
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.errors import CodedError, ErrorCode
    from durable_loop.core.messages import Message, ToolCall
    from durable_loop.core.outcome import judge_final
    from durable_loop.core.pipeline_trace import PipelineTrace
    from durable_loop.core.router.contracts import (
        AnswerMode,
        RepairNote,
        RouterAnswerInput,
        RouterAnswerOutput,
        RouterStepInput,
        RouterStepOutput,
    )
    from durable_loop.core.router.options import answer_options, step_options
    from durable_loop.core.router.protocol import ExecutorCall
    from durable_loop.core.router.step import (
        Answer,
        AskExecutor,
        AskRouter,
        CheckPatch,
        Fail,
        ModelOutput,
        RouteState,
        RunCall,
        advance,
        shown_to_executor,
        with_patch,
    )
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.activity_calls import (
    LLM_NON_RETRYABLE,
    failure_of,
    retry_policy,
    run_activity,
)
from durable_loop.workflows.run_control import MessageCancelled
from durable_loop.workflows.tool_loop import MessageLoop

StepKind = Literal["route", "execute"]


class RouterPipeline(MessageLoop):
    can_park = False  # one call per message, no turn to resume: gated tools are refused

    async def run(self, text: str) -> RunResult:
        router = self.config.router
        self.trace = PipelineTrace()
        self.endpoint = self.settings.llm
        if router.model:
            self.endpoint = self.endpoint.model_copy(update={"model": router.model})
        user_seq = self._append(Message.user(text))
        start = RouteState(
            specs=self._visible_specs(),
            said=self._said(text),
            tools_on=self.config.tool_use_mode is not ToolUseMode.DISABLED,
            repair_attempts=router.repair_attempts,
        )
        try:
            return await self._route(start, user_seq)
        except MessageCancelled:
            return self._cancelled(self.control.reason or "cancelled")
        finally:
            self.result.pipeline = self.trace
            await self._flush()

    async def _route(self, state: RouteState, user_seq: int) -> RunResult:
        """Carry out the step's actions until it answers, runs the call or fails."""
        output: ModelOutput | None = None
        while True:
            step = advance(state, output)
            state, action = step.state, step.action
            self._note(state)
            if isinstance(action, CheckPatch):
                state = with_patch(state, action.patch, workflow.patched(action.patch))
                continue
            if isinstance(action, AskRouter | AskExecutor):
                out = await self._ask(action, user_seq)
                if out is None:
                    return self.result
                output = ModelOutput(text=out.text, truncated=out.truncated)
                continue
            return await self._conclude(action, user_seq)

    async def _conclude(self, action: Answer | RunCall | Fail, user_seq: int) -> RunResult:
        if isinstance(action, Fail):
            return self._fail(action.code, action.message)
        if isinstance(action, RunCall):
            return await self._run_call(action.call, user_seq)
        return await self._answer(action.mode, user_seq, question=action.question)

    def _note(self, state: RouteState) -> None:
        """What the step decided so far, in the trace (the reply's meta carries it)."""
        self.trace.choice, self.trace.tool = state.choice, state.tool
        self.trace.ungrounded = list(state.ungrounded)
        self.trace.clarify_overruled = state.clarify_overruled
        self.trace.repairs = list(state.repairs)

    async def _run_call(self, call: ExecutorCall, user_seq: int) -> RunResult:
        result_seq = await self._call_tool(call)
        mode: AnswerMode = "summarize" if self.config.router.summarize else "raw"
        return await self._answer(mode, user_seq, result_seq=result_seq, tool=call.tool)

    def _said(self, text: str) -> list[str]:
        """What the executor is shown: the message and the recent conversation (previews,
        as the workflow keeps them)."""
        earlier = [e.preview for e in self.cursor.tail if e.role in ("user", "assistant")]
        return shown_to_executor(text, earlier, self.config.router.context_messages)

    def _visible_specs(self) -> list[ToolSpec]:
        return [self.specs[name] for name in self.visible]

    def _count_turn(self) -> int:
        self.cursor.turn_index += 1
        self.result.turns += 1
        self.result.session_turns.append(self.cursor.turn_index)
        return self.cursor.turn_index

    # ------------------------------------------------------------------ router, executor

    async def _ask(self, action: AskRouter | AskExecutor, user_seq: int) -> RouterStepOutput | None:
        if isinstance(action, AskRouter):
            return await self._step("route", user_seq, None, action.repair)
        return await self._step("execute", user_seq, action.tool, action.repair)

    async def _step(
        self, kind: StepKind, user_seq: int, tool: str | None, repair: RepairNote | None
    ) -> RouterStepOutput | None:
        endpoint: LlmEndpoint = self.endpoint
        inp = RouterStepInput(
            session_id=self.session_id,
            kind=kind,
            user_seq=user_seq,
            turn=self._count_turn(),
            endpoint=endpoint,
            appends=self.appends,
            tool_names=self.visible if kind == "route" else [],
            tool=tool,
            repair=repair,
            context_messages=self.config.router.context_messages,
            max_output_bytes=self.config.router.max_output_bytes,
            options=step_options(self.config.router, self.config.request_overrides),
        )
        try:
            step = run_activity(
                ROUTER_STEP,
                inp,
                start_to_close_timeout=timedelta(seconds=endpoint.timeout_s + 15),
                retry_policy=retry_policy(endpoint.retry, LLM_NON_RETRYABLE),
                cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                summary=f"{'router' if kind == 'route' else 'executor'}: {endpoint.model}",
            )
            out = await self.control.guard(step)
        except ActivityError as err:
            failure = failure_of(err)
            self._fail(failure.code, failure.message)
            return None
        self.appends = []
        self.result.usage = self.result.usage + out.usage
        self.cursor.usage = self.cursor.usage + out.usage
        if kind == "route":
            self.trace.router_ms += out.latency_ms
            self.trace.router_attempts += 1
        else:
            self.trace.executor_ms += out.latency_ms
            self.trace.executor_attempts += 1
        return out

    # ------------------------------------------------------------------ tool

    async def _call_tool(self, call: ExecutorCall) -> int:
        """Store the executor's call as an assistant tool call and run it through the
        tool loop's own checks and execution; return the result's seq."""
        assistant_seq = self.cursor.take_seq()
        call_id = f"route_{assistant_seq}"
        arguments = canonical_dumps(call.args)
        message = Message(
            role="assistant", tool_calls=[ToolCall(id=call_id, name=call.tool, arguments=arguments)]
        )
        self.appends.append(AppendItem(seq=assistant_seq, message=message))
        self._remember(assistant_seq, "assistant", None, [call.tool])
        await self._flush()
        valid, digest = arguments_fingerprint(arguments)
        summary = ToolCallSummary(
            index=0,
            id=call_id,
            name=call.tool,
            args_bytes=utf8_len(arguments),
            args_sha256=digest,
            args_valid_json=valid,
        )
        await self._run_tools(LlmTurnOutput(assistant_seq=assistant_seq, tool_calls=[summary]))
        self.trace.deduplicated = self.result.tool_calls[-1].deduplicated
        return assistant_seq + 1

    # ------------------------------------------------------------------ reply

    async def _answer(
        self,
        mode: AnswerMode,
        user_seq: int,
        *,
        result_seq: int | None = None,
        tool: str | None = None,
        question: str | None = None,
    ) -> RunResult:
        uses_model = mode in ("summarize", "answer")
        reply_seq = self.cursor.take_seq()
        inp = RouterAnswerInput(
            session_id=self.session_id,
            mode=mode,
            user_seq=user_seq,
            reply_seq=reply_seq,
            turn=self._count_turn() if uses_model else self.cursor.turn_index,
            endpoint=self.endpoint,
            appends=self.appends,
            result_seq=result_seq,
            tool=tool,
            clarify_question=question,
            summary_input_bytes=self.config.router.summary_input_bytes,
            context_messages=self.config.router.context_messages,
            options=answer_options(self.config.router, self.config.request_overrides),
            reply_inline_bytes=self.config.reply_inline_bytes,
            trace=self.trace,
        )
        try:
            out = await self.control.guard(self._answer_activity(inp, uses_model))
        except ActivityError as err:
            failure = failure_of(err)
            return self._fail(failure.code, failure.message)
        self._take_reply(out, reply_seq, uses_model)
        verdict = self._judge_reply(mode, out.text)
        if verdict is not None:
            self.result.status = "failed"
            self.result.error = verdict
        return self.result

    def _answer_activity(
        self, inp: RouterAnswerInput, uses_model: bool
    ) -> Coroutine[Any, Any, RouterAnswerOutput]:
        return run_activity(
            ROUTER_ANSWER,
            inp,
            start_to_close_timeout=timedelta(seconds=self.endpoint.timeout_s + 15),
            retry_policy=retry_policy(self.endpoint.retry, LLM_NON_RETRYABLE),
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"answer ({inp.mode}): {self.endpoint.model if uses_model else 'no model'}",
        )

    def _take_reply(self, out: RouterAnswerOutput, reply_seq: int, uses_model: bool) -> None:
        self.appends = []
        self.trace.summarizer_ms = out.latency_ms if uses_model else 0
        self.result.usage = self.result.usage + out.usage
        self.cursor.usage = self.cursor.usage + out.usage
        self.result.reply = out.text
        self.result.reply_truncated = out.truncated
        self.result.reply_seq = reply_seq
        self._remember(reply_seq, "assistant", out.text)

    def _judge_reply(self, mode: AnswerMode, text: str) -> CodedError | None:
        """A clarify is not a final answer, so only an empty one fails."""
        verdict = None
        if mode != "clarify":
            verdict = judge_final(
                self.config,
                tool_calls_made=len(self.result.tool_calls),
                last_ok_by_tool=self.last_ok_by_tool,
            )
        if verdict is None and not text.strip():
            verdict = CodedError(code=ErrorCode.EMPTY_FINAL, message="the final reply was empty")
        return verdict
