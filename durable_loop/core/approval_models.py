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
from durable_loop.core.tool_names import joined_name

UPDATE_DECIDE_TOOL_CALL = "decide_tool_call"
SIGNAL_TOOL_CALL_DECISION = "tool_call_decision"
QUERY_TOOL_APPROVALS = "tool_approvals"
UPDATE_MESSAGE_RESULT = "message_result"
UPDATE_WITHDRAW_TOOL_POLICY = "withdraw_tool_policy"
READ_TOOL_CALLS = "read_tool_calls"
PATCH_TOOL_APPROVALS = "tool-approvals"
"""Patch id of the commands only a held call issues (reading its arguments, the audit)."""
PATCH_IN_DOUBT = "in-doubt-to-person"
"""Patch id: an ``effect="once"`` call in doubt is held for a person (``kind="in_doubt"``)
instead of ending with ``TOOL_CALL_IN_DOUBT`` as its final result."""

HoldKind = Literal["approval", "in_doubt"]
"""Why a call is held: it needs approval before it runs, or an attempt of it stopped inside
an ``effect="once"`` tool and no one knows whether its effect happened."""
InDoubtAnswer = Literal["happened", "run_again", "give_up"]
IN_DOUBT_ANSWERS: tuple[InDoubtAnswer, ...] = ("happened", "run_again", "give_up")
"""A person's verdicts on a call in doubt: its effect happened (``result`` is what the model
reads), run it again (once), or give up (the model reads that it did not run)."""
ToolCallStatus = Literal["confirmed", "rejected", "expired", "happened", "run_again", "given_up"]
MAX_DECISION_BYTES = 1_000_000
"""A decision (edited arguments, comment) larger than this is refused before it is sent:
Temporal refuses payloads over its 2 MB blob limit with a bare gRPC RESOURCE_EXHAUSTED, and
no session takes edited arguments this large by default (``max_tool_args_bytes`` 200 000)."""


class PendingToolCall(BaseModel):
    """A model's tool call held in the session workflow until a person decides."""

    call_id: str
    tool: str
    original_name: str | None = Field(
        default=None,
        description="The tool's own name when ``tool`` is its model-facing mapping "
        "(``files.read`` for ``files_read``)",
    )
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
    kind: HoldKind = "approval"
    doubt: str | None = Field(
        default=None, description="For a call in doubt: what is known of the attempt that stopped"
    )
    reruns: int = Field(
        default=0, description="How often a person already said 'run it again' to this call"
    )

    @property
    def shown_tool(self) -> str:
        """``files_read (files.read)`` for a mapped name, else the name."""
        return joined_name(self.tool, self.original_name)

    def decision(
        self,
        verdict: Verdict | InDoubtAnswer,
        approver: str,
        *,
        comment: str | None = None,
        arguments: dict[str, JsonValue] | None = None,
        remember: Remember | None = None,
        result: str | None = None,
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
            result=result,
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


class WithdrawToolPolicy(BaseModel):
    """A person withdraws a standing approval: later calls of its tool wait again. Named by
    the call whose approval set it (``ToolPolicy.call_id``, as the listing shows)."""

    set_on: str = Field(description="The call id whose approval set the standing approval")
    withdrawn_by: str = Field(default="", description="Required (blank: INVALID_DECISION)")
    comment: str | None = None
    session_id: str | None = Field(
        default=None, description="The session the caller means; another one is refused"
    )


class ToolCallDecision(BaseModel):
    """A person's decision on a held call, bound to the fingerprint they saw. ``confirm``
    with ``arguments`` approves the call with those (edited) arguments."""

    call_id: str
    verdict: str = Field(
        description='"confirm" or "reject"; on a call in doubt "happened", "run_again" or '
        '"give_up" (anything else: INVALID_DECISION)'
    )
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
    result: str | None = Field(
        default=None, description="With happened: the call's result, as the model reads it"
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
    kind: HoldKind = "approval"
    result: str | None = Field(default=None, description="With happened: the person's text")
    rerun: int = Field(default=0, description="With run_again: which re-run it allows (1, 2…)")


class ToolApprovalList(BaseModel):
    pending: list[PendingToolCall] = Field(default_factory=list)
    decided: list[ToolCallDecided] = Field(default_factory=list)
    refused: list[RefusedDecision] = Field(default_factory=list)
    policies: list[ToolPolicy] = Field(
        default_factory=list, description="Standing approvals (approve and remember)"
    )


class MessageResultRequest(BaseModel):
    message_id: str
