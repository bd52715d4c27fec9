"""Typed bodies of the JSON endpoints (requests and the responses not defined elsewhere)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.approvals import InDoubtAnswer, PendingToolCall, Remember
from durable_loop.core.config import SessionSettings
from durable_loop.core.proposals import DecisionResult, PendingProposal, VerdictInput
from durable_loop.core.session_ids import SESSION_ID_RULE, SessionIdText
from durable_loop.core.typed_output import OutputSchema
from durable_loop.service.diff import FactsDiff


class StartSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: SessionIdText | None = Field(
        default=None, description=f"Default: a new random id. A session id is {SESSION_ID_RULE}"
    )
    settings: SessionSettings


class SessionStarted(BaseModel):
    session_id: str
    workflow_id: str
    web_ui_url: str | None = None
    started: bool = Field(default=True, description="False: the session already ran")
    settings_not_applied: list[str] = Field(
        default_factory=list,
        description="Settings of the request that differ from those of the session that "
        "already ran: they were not applied (switch_model and set_budget change them)",
    )


IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"


class PostMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    settings: SessionSettings | None = Field(
        default=None, description="Start the session with these settings if it does not exist"
    )
    wait_for_approval: bool = Field(
        default=False,
        description="Reply only with the final result, not awaiting_approval while tool "
        "calls wait for a person",
    )
    interrupt: bool = Field(
        default=False, description="Cancel the session's running message and run this one next"
    )
    output_schema: OutputSchema | None = Field(
        default=None,
        description="A JSON Schema the final answer must fit: the reply's output holds it "
        "parsed (422 INVALID_SETTING for a schema that is not valid JSON Schema)",
    )


class CancelMessage(BaseModel):
    """Which message to cancel: ``message_id`` (as in a RunResult or the status), or the
    ``idempotency_key`` the caller sent it with; neither: the running message."""

    model_config = ConfigDict(extra="forbid")

    message_id: str | None = Field(default=None, min_length=1, max_length=400)
    idempotency_key: str | None = Field(default=None, pattern=IDEMPOTENCY_KEY_PATTERN)
    reason: str = Field(default="cancelled", max_length=200)


class Decide(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: VerdictInput = Field(description="approve or reject (confirm is accepted too)")
    comment: str | None = Field(default=None, max_length=2_000)
    fingerprint: str | None = Field(
        default=None,
        description="The content the approver saw; default for approve: the content "
        "pending right now",
    )


class SetBudget(BaseModel):
    """A budget change; the bearer token's identity is recorded as who made it."""

    model_config = ConfigDict(extra="forbid")

    max_session_tokens: int | None = Field(default=None, ge=1)
    unlimited_tokens: bool = False
    max_turns: int | None = Field(default=None, ge=1)
    comment: str | None = Field(default=None, max_length=2_000)


class DecideToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: VerdictInput = Field(description="approve or reject (confirm is accepted too)")
    fingerprint: str | None = Field(
        default=None,
        description="The fingerprint of the call the approver saw (required unless the "
        "service allows unbound decisions: 428 FINGERPRINT_REQUIRED)",
    )
    comment: str | None = Field(default=None, max_length=2_000)
    arguments: dict[str, JsonValue] | None = Field(
        default=None, description="Approve with these edited arguments"
    )
    remember: Remember | None = Field(
        default=None,
        description="Approve and remember: later calls of this tool run without waiting (for "
        "for_s seconds, or the rest of the session; only those matching the JSON Schema "
        "condition), and calls already waiting that it allows run now",
    )


class AnswerToolCall(BaseModel):
    """A person's answer on a call in doubt (an attempt stopped inside a tool that must not
    run twice blindly)."""

    model_config = ConfigDict(extra="forbid")

    answer: InDoubtAnswer = Field(
        description="happened (its effect took place: result is what the model reads), "
        "run_again (run it once more) or give_up (the model reads that it did not run)"
    )
    fingerprint: str | None = Field(
        default=None,
        description="The fingerprint of the call in doubt the person saw (required unless the "
        "service allows unbound decisions: 428 FINGERPRINT_REQUIRED)",
    )
    result: str | None = Field(default=None, max_length=4_000, description="With happened")
    comment: str | None = Field(default=None, max_length=2_000)


class WithdrawPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: str | None = Field(default=None, max_length=2_000)


class CloseSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(default="closed", max_length=200)


class Accepted(BaseModel):
    session_id: str
    accepted: Literal[True] = True


class PendingItem(BaseModel):
    session_id: str
    title: str | None = None
    proposal: PendingProposal
    diff: FactsDiff | None = Field(default=None, description="None when no store is configured")
    conflict: ProposalConflict | None = Field(
        default=None, description="Facts it touches changed since: approving cannot commit"
    )


class ProposalConflict(BaseModel):
    paths: list[str] = Field(description="Facts paths changed since the proposal was made")
    current: dict[str, JsonValue] = Field(
        description="Their current values (a path no longer there is left out)"
    )


class PendingToolCallItem(BaseModel):
    session_id: str
    title: str | None = None
    call: PendingToolCall
    arguments_pretty: str = Field(description="The arguments, pretty-printed for a person")


class PendingListing(BaseModel):
    items: list[PendingItem]
    tool_calls: list[PendingToolCallItem] = Field(default_factory=list)
    source: Literal["visibility", "registry"] = Field(
        description="visibility: the DurableLoopPendingProposals > 0 query plus the sessions "
        "this service has seen; registry: only the sessions this service has seen"
    )


class DecisionOutcome(BaseModel):
    session_id: str
    result: DecisionResult
