"""The held-call models a client reads and sends (listing, decision, outcome) and the
names of the handlers that carry them; the rules of which calls need approval, and the
checks of a decision, are in :mod:`durable_loop.core.approvals`. Kept apart so that a
short-lived client (a CLI query) imports neither JSON Schema nor the tool specs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.proposals import RefusedDecision, Verdict

UPDATE_DECIDE_TOOL_CALL = "decide_tool_call"
SIGNAL_TOOL_CALL_DECISION = "tool_call_decision"
QUERY_TOOL_APPROVALS = "tool_approvals"
UPDATE_MESSAGE_RESULT = "message_result"
READ_TOOL_CALLS = "read_tool_calls"
PATCH_TOOL_APPROVALS = "tool-approvals"
"""Patch id of the commands only a held call issues (reading its arguments, the audit)."""

ToolCallStatus = Literal["confirmed", "rejected", "expired"]
MAX_DECISION_BYTES = 1_000_000
"""A decision (edited arguments, comment) larger than this is refused before it is sent:
Temporal refuses payloads over its 2 MB blob limit with a bare gRPC RESOURCE_EXHAUSTED, and
no session takes edited arguments this large by default (``max_tool_args_bytes`` 200 000)."""


class PendingToolCall(BaseModel):
    """A model's tool call held in the session workflow until a person decides."""

    call_id: str
    tool: str
    arguments: dict[str, JsonValue] = Field(description="As stored with the assistant message")
    fingerprint: str = Field(
        description="What a decision names: sha256 of the tool, the canonical arguments and "
        "where the call is held (session, message, call id, result seq), so a decision "
        "approves this hold and no other"
    )
    args_sha256: str = ""
    session_id: str
    message_id: str
    turn: int
    assistant_seq: int
    call_index: int
    result_seq: int
    created_at: datetime
    expires_at: datetime

    def decision(
        self,
        verdict: Verdict,
        approver: str,
        *,
        comment: str | None = None,
        arguments: dict[str, JsonValue] | None = None,
        remember: Remember | None = None,
    ) -> ToolCallDecision:
        """A decision on this call, bound to its fingerprint and session."""
        return ToolCallDecision(
            call_id=self.call_id,
            verdict=verdict,
            approver=approver,
            fingerprint=self.fingerprint,
            comment=comment,
            arguments=arguments,
            session_id=self.session_id,
            remember=remember,
        )


class Remember(BaseModel):
    """With a confirmation: later calls of the same tool run without waiting, for
    ``for_s`` seconds (None: the rest of the session), only those whose arguments match
    ``condition`` (a JSON Schema; None: every call). Calls already waiting that it allows
    run at once."""

    model_config = ConfigDict(extra="forbid")

    for_s: float | None = Field(default=None, gt=0, le=366 * 24 * 3600)
    condition: dict[str, JsonValue] | None = None


class ToolPolicy(BaseModel):
    """A person's standing approval of one tool in one session (see :class:`Remember`)."""

    tool: str
    approved_by: str
    condition: dict[str, JsonValue] | None = None
    created_at: datetime
    expires_at: datetime | None = Field(default=None, description="None: the rest of the session")
    call_id: str = Field(description="The call whose approval set it")


class ToolCallDecision(BaseModel):
    """A person's decision on a held call, bound to the fingerprint they saw. ``confirm``
    with ``arguments`` approves the call with those (edited) arguments."""

    call_id: str
    verdict: str = Field(description='"confirm" or "reject" (anything else: INVALID_DECISION)')
    approver: str = Field(default="", description="Required (blank: INVALID_DECISION)")
    fingerprint: str | None = None
    comment: str | None = None
    arguments: dict[str, JsonValue] | None = None
    session_id: str | None = Field(
        default=None, description="The session the caller means; another one's call is refused"
    )
    remember: Remember | None = Field(
        default=None, description="With confirm: approve later calls of this tool too"
    )


class ToolCallDecided(BaseModel):
    call_id: str
    tool: str
    message_id: str
    status: ToolCallStatus
    decided_by: str
    fingerprint: str
    comment: str | None = None
    arguments: dict[str, JsonValue] | None = Field(
        default=None, description="The edited arguments the call runs with"
    )
    edited_fields: list[str] = Field(default_factory=list)
    decided_at: datetime


class ToolApprovalList(BaseModel):
    pending: list[PendingToolCall] = Field(default_factory=list)
    decided: list[ToolCallDecided] = Field(default_factory=list)
    refused: list[RefusedDecision] = Field(default_factory=list)
    policies: list[ToolPolicy] = Field(
        default_factory=list, description="Standing approvals (approve and remember)"
    )


class MessageResultRequest(BaseModel):
    message_id: str
