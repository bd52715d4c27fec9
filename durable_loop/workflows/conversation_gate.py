"""Recovery ``withhold_tools_from_conversation`` in the message loop: one
``conversation_gate`` activity before a person's message is first sent with tools; on
``none`` the message's turns go without tools. A failed gate leaves the tools offered
(the gate only ever withholds) and says so in the message's warnings."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import CONVERSATION_GATE
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.conversation_gate import (
        QUESTION_CHARS,
        ConversationGateInput,
        ConversationGateOutput,
        gate_options,
        gate_tools,
    )
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.recoveries.withhold_tools_from_conversation import (
        NAME,
        WithholdToolsFromConversation,
    )
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.activity_calls import (
    LLM_NON_RETRYABLE,
    failure_of,
    retry_policy,
    run_activity,
)
from durable_loop.workflows.run_control import RunControl
from durable_loop.workflows.tool_placement import heartbeat_timeout


def gate_settings(config: RuntimeConfig) -> WithholdToolsFromConversation | None:
    """The recovery's settings when this message's first request would offer tools with
    ``tool_choice`` auto, else None (a required call or no tools has nothing to gate)."""
    settings = config.recovery(NAME)
    if not isinstance(settings, WithholdToolsFromConversation) or config.tool_choice != "auto":
        return None
    return settings


async def ask_gate(
    *,
    session_id: str,
    user_seq: int,
    turn: int,
    endpoint: LlmEndpoint,
    question: str,
    specs: list[ToolSpec],
    settings: WithholdToolsFromConversation,
    config: RuntimeConfig,
    control: RunControl,
) -> ConversationGateOutput | str:
    """The gate's answer; a failure as one line (the tools stay offered).

    No patch guards it: it runs only for sessions whose settings name the recovery, and no
    history recorded before it can (an unknown recovery name is refused), so every run
    that meets this code started with it. A ``workflow.patched`` here also failed replay:
    with status Queries polled while a session's first message started, the marker was
    recorded one workflow task after the catalog's local activity, and replay asked for it
    one task early (TMPRL1100; the cancel test in tests/workflows/test_conversation_gate.py
    on the dev server, 3 of 5 runs; the cause: workflows/run_start_patches.py)."""
    tools = gate_tools(specs)
    inp = ConversationGateInput(
        session_id=session_id,
        user_seq=user_seq,
        turn=turn,
        endpoint=endpoint,
        question=question[:QUESTION_CHARS],
        tools=tools,
        examples=settings.examples,
        options=gate_options(endpoint, config.request_overrides, [t.name for t in tools]),
    )
    call = run_activity(
        CONVERSATION_GATE,
        inp,
        start_to_close_timeout=timedelta(seconds=endpoint.timeout_s + 15),
        heartbeat_timeout=heartbeat_timeout(config),
        retry_policy=retry_policy(endpoint.retry, LLM_NON_RETRYABLE),
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        summary=f"conversation gate: {endpoint.model} before turn {turn + 1}",
    )
    try:
        return await control.guard(call)
    except ActivityError as err:
        failure = failure_of(err)
        return f"{NAME}: the gate failed ({failure.code}); tools offered"
