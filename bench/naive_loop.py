"""The baseline this project exists to replace: a tool loop that keeps the transcript in
workflow state, passes all of it to the LLM activity on every call and gets each tool's
output back inline. Its history grows with the square of the session length.

It does not continue as new: carrying the transcript across would only move the failure
from the history size limit to the 2 MB payload limit.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, Field
from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.contracts import CloseRequest, UserMessage
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.messages import Message
    from durable_loop.core.tools import ToolSpec

NAIVE_WORKFLOW = "NaiveSession"
NAIVE_LLM = "naive_llm"
NAIVE_TOOL = "naive_tool"
NAIVE_SEND = "naive_send"
NAIVE_CLOSE = "naive_close"


class NaiveSessionInput(BaseModel):
    endpoint: LlmEndpoint
    tools: list[ToolSpec]
    max_turns: int = Field(default=12, ge=1)


class NaiveLlmInput(BaseModel):
    endpoint: LlmEndpoint
    messages: list[Message] = Field(description="The whole transcript, every call")
    tools: list[ToolSpec]


class NaiveLlmOutput(BaseModel):
    message: Message


class NaiveToolInput(BaseModel):
    name: str
    arguments: str
    call_id: str
    turn: int


class NaiveToolOutput(BaseModel):
    envelope: Envelope = Field(description="The tool's whole output, inline")
    output_bytes: int


class NaiveReply(BaseModel):
    reply: str | None
    llm_calls: int
    tool_calls: int


class NaiveSessionEnd(BaseModel):
    messages_done: int
    transcript_messages: int


RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=100),
    maximum_interval=timedelta(seconds=1),
    maximum_attempts=3,
)


@workflow.defn(name=NAIVE_WORKFLOW)
class NaiveSessionWorkflow:
    @workflow.init
    def __init__(self, inp: NaiveSessionInput) -> None:
        self._inp = inp
        self._messages: list[Message] = []
        self._busy = False
        self._closed = False
        self._done = 0

    @workflow.run
    async def run(self, inp: NaiveSessionInput) -> NaiveSessionEnd:
        await workflow.wait_condition(lambda: self._closed)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return NaiveSessionEnd(messages_done=self._done, transcript_messages=len(self._messages))

    @workflow.signal(name=NAIVE_CLOSE)
    def close(self, request: CloseRequest) -> None:
        self._closed = True

    @workflow.update(name=NAIVE_SEND)
    async def send(self, message: UserMessage) -> NaiveReply:
        await workflow.wait_condition(lambda: not self._busy)
        self._busy = True
        try:
            return await self._loop(message.text)
        finally:
            self._busy = False
            self._done += 1

    async def _loop(self, text: str) -> NaiveReply:
        self._messages.append(Message.user(text))
        tool_calls = 0
        for llm_calls in range(1, self._inp.max_turns + 1):
            out = await workflow.execute_activity(
                NAIVE_LLM,
                NaiveLlmInput(
                    endpoint=self._inp.endpoint, messages=self._messages, tools=self._inp.tools
                ),
                result_type=NaiveLlmOutput,
                start_to_close_timeout=timedelta(seconds=self._inp.endpoint.timeout_s + 15),
                retry_policy=RETRY,
            )
            self._messages.append(out.message)
            if not out.message.tool_calls:
                return NaiveReply(
                    reply=out.message.content, llm_calls=llm_calls, tool_calls=tool_calls
                )
            for call in out.message.tool_calls:
                tool_calls += 1
                result = await workflow.execute_activity(
                    NAIVE_TOOL,
                    NaiveToolInput(
                        name=call.name, arguments=call.arguments, call_id=call.id, turn=llm_calls
                    ),
                    result_type=NaiveToolOutput,
                    start_to_close_timeout=timedelta(seconds=70),
                    retry_policy=RETRY,
                )
                self._messages.append(Message.tool_result(call.id, call.name, result.envelope))
        return NaiveReply(reply=None, llm_calls=self._inp.max_turns, tool_calls=tool_calls)
