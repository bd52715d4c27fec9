"""The ``router`` loop strategy: router -> executor -> tool -> summarizer, for models with a
small context or unreliable native tool calling.

1. The router sees the tool *names* and answers ``{choice, tool, question}``.
2. If it chose a tool, the executor sees that one tool's schema and answers ``{tool, args}``.
3. The call runs exactly like a natively emitted one (masking, size and JSON guards,
   deduplication, placement, envelopes), because it goes through the tool loop's own code.
4. The summarizer (no tools) turns the result into the reply; ``none`` gets a direct answer
   and ``clarify`` replies with the router's question.

Each model output is parsed as untrusted text and validated in this workflow
(``router.protocol``); a failure gets one repair prompt quoting the error. Every step is an
activity, so history shows the route taken and the trace carries each step's latency.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Literal, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

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
        RouterStepInput,
        RouterStepOutput,
    )
    from durable_loop.core.router.protocol import (
        ExecutorCall,
        RouterDecision,
        StepFailure,
        clarify_of_named_argument,
        clarify_question,
        is_toolless_clarify,
        parse_executor,
        parse_router,
        stated_arguments,
        ungrounded_arguments,
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

Parsed = TypeVar("Parsed", RouterDecision, ExecutorCall)
GROUNDED_ARGUMENTS_PATCH = "router-grounded-arguments"
CLARIFY_NAMED_ARGUMENT_PATCH = "router-clarify-names-its-argument"
CLARIFY_CHECKED_PATCH = "router-clarify-checked"
StepKind = Literal["route", "execute"]


class RouterPipeline(MessageLoop):
    can_park = False  # one call per message, no turn to resume: gated tools are refused

    async def run(self, text: str) -> RunResult:
        router = self.config.router
        self.trace = PipelineTrace()
        self.stated: ExecutorCall | None = None
        self.endpoint = self.settings.llm
        if router.model:
            self.endpoint = self.endpoint.model_copy(update={"model": router.model})
        user_seq = self._append(Message.user(text))
        try:
            if not self.visible or self.config.tool_use_mode is ToolUseMode.DISABLED:
                self.trace.choice = "none"
                return await self._answer("answer", user_seq)
            decision = await self._ask(
                "route",
                user_seq,
                self._parse_route,
                rescue=lambda out: self._rescue_route(out, user_seq, text),
            )
            if decision is None:
                return self.result
            self.trace.choice, self.trace.tool = decision.choice, decision.tool
            if decision.choice == "none":
                return await self._answer("answer", user_seq)
            spec = self.specs[str(decision.tool)]
            if decision.choice == "clarify":
                stated = None
                if workflow.patched(CLARIFY_CHECKED_PATCH):
                    stated = await self._stated_call(spec, user_seq, text)
                if stated is None:
                    if self.result.status == "failed":
                        return self.result
                    return await self._answer("clarify", user_seq, question=decision.question)
                self.trace.choice, self.trace.clarify_overruled = "call_tool", True
                return await self._run_call(stated, user_seq)
            if self.stated is not None:
                self.trace.clarify_overruled = True
                return await self._run_call(self.stated, user_seq)
            call = await self._ask(
                "execute", user_seq, lambda out: parse_executor(out, spec), tool=spec.name
            )
            if call is None:
                return self.result
            missing = ungrounded_arguments(call, spec, self._said(text))
            if missing and workflow.patched(GROUNDED_ARGUMENTS_PATCH):
                self.trace.choice, self.trace.ungrounded = "clarify", missing
                question = clarify_question(spec, missing)
                return await self._answer("clarify", user_seq, question=question)
            return await self._run_call(call, user_seq)
        except MessageCancelled:
            return self._cancelled(self.control.reason or "cancelled")
        finally:
            self.result.pipeline = self.trace
            await self._flush()

    async def _run_call(self, call: ExecutorCall, user_seq: int) -> RunResult:
        result_seq = await self._call_tool(call)
        mode: AnswerMode = "summarize" if self.config.router.summarize else "raw"
        return await self._answer(mode, user_seq, result_seq=result_seq, tool=call.tool)

    async def _stated_call(self, spec: ToolSpec, user_seq: int, text: str) -> ExecutorCall | None:
        """The call to make instead of the router's clarify, when the message already holds
        what it asks for: one executor request (no repair), kept only if every required
        value is the user's own (patch ``router-clarify-checked``). A small router asks
        "What is the flight number?" of "Is flight BA 117 on time?"; an invented or
        expanded value keeps the clarify."""
        out = await self._step("execute", user_seq, spec.name, None)
        if out is None or out.truncated:
            return None
        call = parse_executor(out.text, spec, bare_args=True)
        if isinstance(call, StepFailure) or not stated_arguments(call, spec, self._said(text)):
            return None
        return call

    async def _rescue_route(self, out: str, user_seq: int, text: str) -> RouterDecision | None:
        """An invalid router output that still says what to do (patch
        ``router-clarify-checked``), read without a repair request: a clarify without a
        tool whose question names one tool's argument by its distinctive words ("the
        tracking number" for ``tracking_id``) is checked like any clarify, and becomes the
        call when the message holds its values; a clarify naming no tool's argument at all
        has no lookup to clarify and is ``none``. Anything else goes to the repair prompt."""
        specs = self._visible_specs()
        named = clarify_of_named_argument(out, specs, distinctive=True)
        toolless = named is None and is_toolless_clarify(out, specs)
        if (named is None and not toolless) or not workflow.patched(CLARIFY_CHECKED_PATCH):
            return None
        if named is None:
            self.trace.repairs.append("route: a clarify naming no tool and no argument: none")
            return RouterDecision(choice="none")
        self.stated = await self._stated_call(self.specs[str(named.tool)], user_seq, text)
        return None if self.stated is None else RouterDecision(choice="call_tool", tool=named.tool)

    def _said(self, text: str) -> list[str]:
        """What the executor was shown: the message and the recent conversation (previews,
        as the workflow keeps them)."""
        keep = self.config.router.context_messages
        earlier = [e.preview for e in self.cursor.tail if e.role in ("user", "assistant")]
        return [text, *(earlier[-keep - 1 :] if keep else [])]

    def _parse_route(self, out: str) -> RouterDecision | StepFailure:
        """The router's answer; a clarify whose question names one tool's required
        argument counts as a clarify for that tool (patch
        ``router-clarify-names-its-argument``) instead of going to the repair prompt; since
        ``router-clarify-checked`` a one-letter argument (``a``) is not named by the article
        "a"."""
        specs = self._visible_specs()
        decision = parse_router(out, specs)
        if isinstance(decision, StepFailure):
            letters = clarify_of_named_argument(out, specs, letters=True)
            named = clarify_of_named_argument(out, specs)
            if (letters or named) is None or not workflow.patched(CLARIFY_NAMED_ARGUMENT_PATCH):
                return decision
            if workflow.patched(CLARIFY_CHECKED_PATCH):
                return named or decision
            return letters or decision
        return decision

    def _visible_specs(self) -> list[ToolSpec]:
        return [self.specs[name] for name in self.visible]

    def _options(self) -> dict[str, JsonValue]:
        router = self.config.router
        options: dict[str, JsonValue] = dict(self.config.request_overrides)
        if router.temperature is not None:
            options["temperature"] = router.temperature
        if router.max_tokens is not None:
            options["max_tokens"] = router.max_tokens
        if router.json_mode:
            options["response_format"] = {"type": "json_object"}
        return options

    def _count_turn(self) -> int:
        self.cursor.turn_index += 1
        self.result.turns += 1
        self.result.session_turns.append(self.cursor.turn_index)
        return self.cursor.turn_index

    # ------------------------------------------------------------------ router, executor

    async def _ask(
        self,
        kind: StepKind,
        user_seq: int,
        parse: Callable[[str], Parsed | StepFailure],
        tool: str | None = None,
        rescue: Callable[[str], Awaitable[Parsed | None]] | None = None,
    ) -> Parsed | None:
        """Run one step, with up to ``repair_attempts`` repair prompts quoting the error;
        ``rescue`` may read an invalid output before a repair is asked for."""
        repair: RepairNote | None = None
        failure: StepFailure | None = None
        for _ in range(1 + self.config.router.repair_attempts):
            out = await self._step(kind, user_seq, tool, repair)
            if out is None:
                return None
            if out.truncated:
                failure = StepFailure(
                    code=ErrorCode.SCHEMA_INVALID, message="the output is too long"
                )
            else:
                parsed = parse(out.text)
                if not isinstance(parsed, StepFailure):
                    return parsed
                rescued = None if rescue is None else await rescue(out.text)
                if rescued is not None or self.result.status == "failed":
                    return rescued
                failure = parsed
            self.trace.repairs.append(f"{kind}: {failure.code}: {failure.message}"[:300])
            repair = RepairNote(
                previous_output=out.text, error=f"{failure.code}: {failure.message}"
            )
        code = (
            ErrorCode.ROUTER_INVALID_OUTPUT
            if kind == "route"
            else ErrorCode.EXECUTOR_INVALID_OUTPUT
        )
        detail = f"{failure.code}: {failure.message}" if failure else "no output"
        self._fail(code, f"the {kind} step gave no valid output after repair: {detail}")
        return None

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
            options=self._options(),
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
            options={k: v for k, v in self._options().items() if k != "response_format"},
            reply_inline_bytes=self.config.reply_inline_bytes,
            trace=self.trace,
        )
        try:
            answer = run_activity(
                ROUTER_ANSWER,
                inp,
                start_to_close_timeout=timedelta(seconds=self.endpoint.timeout_s + 15),
                retry_policy=retry_policy(self.endpoint.retry, LLM_NON_RETRYABLE),
                cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
                summary=f"answer ({mode}): {self.endpoint.model if uses_model else 'no model'}",
            )
            out = await self.control.guard(answer)
        except ActivityError as err:
            failure = failure_of(err)
            return self._fail(failure.code, failure.message)
        self.appends = []
        self.trace.summarizer_ms = out.latency_ms if uses_model else 0
        self.result.usage = self.result.usage + out.usage
        self.cursor.usage = self.cursor.usage + out.usage
        self.result.reply = out.text
        self.result.reply_truncated = out.truncated
        self.result.reply_seq = reply_seq
        self._remember(reply_seq, "assistant", out.text)
        verdict = None
        if mode != "clarify":
            verdict = judge_final(
                self.config,
                tool_calls_made=len(self.result.tool_calls),
                last_ok_by_tool=self.last_ok_by_tool,
            )
        if verdict is None and not out.text.strip():
            verdict = CodedError(code=ErrorCode.EMPTY_FINAL, message="the final reply was empty")
        if verdict is not None:
            self.result.status = "failed"
            self.result.error = verdict
        return self.result
