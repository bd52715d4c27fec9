"""One typed reference per activity: its registered name with its one input and one output
model. Workflows call activities through these (:mod:`durable_loop.workflows.activity_calls`),
so an activity name is never paired with a result type by hand; the names themselves are a
contract with every stored history and live in :mod:`durable_loop.core.names`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel

from durable_loop.core import names
from durable_loop.core.activity_contracts import (
    ListToolsInput,
    LlmTurnInput,
    LlmTurnOutput,
    SummarizeInput,
    SummarizeOutput,
    ToolCatalogOutput,
    ToolRunInput,
    ToolRunOutput,
    WriteMessagesInput,
    WriteMessagesOutput,
)
from durable_loop.core.approvals import (
    READ_TOOL_CALLS,
    ReadToolCallsInput,
    ReadToolCallsOutput,
)
from durable_loop.core.argument_repair import RepairCallInput, RepairCallOutput
from durable_loop.core.budget import SessionChangeAudit, SessionChangeAudited
from durable_loop.core.conversation_gate import ConversationGateInput, ConversationGateOutput
from durable_loop.core.proposals import (
    FACTS_COMMIT,
    PROPOSAL_CLOSE,
    RECORD_DECISION,
    DecisionAudit,
    DecisionAuditOutput,
    SettleInput,
    SettleOutput,
)
from durable_loop.core.router.contracts import (
    RouterAnswerInput,
    RouterAnswerOutput,
    RouterStepInput,
    RouterStepOutput,
)

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


@dataclass(frozen=True)
class ActivityRef(Generic[In, Out]):
    name: str
    input: type[In]
    output: type[Out]


LIST_TOOLS = ActivityRef(names.LIST_TOOLS, ListToolsInput, ToolCatalogOutput)
LLM_TURN = ActivityRef(names.LLM_TURN, LlmTurnInput, LlmTurnOutput)
RUN_TOOL = ActivityRef(names.RUN_TOOL, ToolRunInput, ToolRunOutput)
RUN_LONG_TOOL = ActivityRef(names.RUN_LONG_TOOL, ToolRunInput, ToolRunOutput)
WRITE_MESSAGES = ActivityRef(names.WRITE_MESSAGES, WriteMessagesInput, WriteMessagesOutput)
SUMMARIZE_CONTEXT = ActivityRef(names.SUMMARIZE_CONTEXT, SummarizeInput, SummarizeOutput)
REPAIR_TOOL_CALL = ActivityRef(names.REPAIR_TOOL_CALL, RepairCallInput, RepairCallOutput)
CONVERSATION_GATE = ActivityRef(
    names.CONVERSATION_GATE, ConversationGateInput, ConversationGateOutput
)
ROUTER_STEP = ActivityRef(names.ROUTER_STEP, RouterStepInput, RouterStepOutput)
ROUTER_ANSWER = ActivityRef(names.ROUTER_ANSWER, RouterAnswerInput, RouterAnswerOutput)
FACTS_COMMIT_REF = ActivityRef(FACTS_COMMIT, SettleInput, SettleOutput)
PROPOSAL_CLOSE_REF = ActivityRef(PROPOSAL_CLOSE, SettleInput, SettleOutput)
AUDIT_SESSION_CHANGE = ActivityRef(
    names.AUDIT_SESSION_CHANGE, SessionChangeAudit, SessionChangeAudited
)
READ_TOOL_CALLS_REF = ActivityRef(READ_TOOL_CALLS, ReadToolCallsInput, ReadToolCallsOutput)
RECORD_DECISION_REF = ActivityRef(RECORD_DECISION, DecisionAudit, DecisionAuditOutput)

ALL = (
    LIST_TOOLS,
    LLM_TURN,
    RUN_TOOL,
    RUN_LONG_TOOL,
    WRITE_MESSAGES,
    SUMMARIZE_CONTEXT,
    REPAIR_TOOL_CALL,
    CONVERSATION_GATE,
    ROUTER_STEP,
    ROUTER_ANSWER,
    FACTS_COMMIT_REF,
    PROPOSAL_CLOSE_REF,
    AUDIT_SESSION_CHANGE,
    READ_TOOL_CALLS_REF,
    RECORD_DECISION_REF,
)
"""Every activity a durable-loop worker registers."""
