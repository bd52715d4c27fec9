"""Tool calls that wait for a person: which calls need approval, and the checks of a
decision.

A tool needs approval when its spec says ``requires_approval`` or its name matches one
of the session's ``ApprovalSettings.tools`` globs; a JSON-Schema ``condition`` for the
tool narrows that to the calls whose arguments match it. The workflow holds such a call
as a :class:`PendingToolCall` until a person decides (:class:`ToolCallDecision`, the same
``confirm``/``reject`` verdicts and fingerprint binding as fact proposals) or it expires.
Those models, what a client reads and sends, live in
:mod:`durable_loop.core.approval_models` (and import from here too). Pure models and
functions: importable in the workflow sandbox.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from durable_loop.core.approval_models import (
    IN_DOUBT_ANSWERS,
    PATCH_IN_DOUBT,
    PATCH_TOOL_APPROVALS,
    QUERY_TOOL_APPROVALS,
    READ_TOOL_CALLS,
    SIGNAL_TOOL_CALL_DECISION,
    UPDATE_DECIDE_TOOL_CALL,
    UPDATE_MESSAGE_RESULT,
    UPDATE_WITHDRAW_TOOL_POLICY,
    HoldKind,
    InDoubtAnswer,
    MessageResultRequest,
    PendingToolCall,
    Remember,
    ToolApprovalList,
    ToolCallDecided,
    ToolCallDecision,
    ToolCallStatus,
    ToolPolicy,
    WithdrawToolPolicy,
)
from durable_loop.core.canonical_json import canonical_dumps, sha256_hex, utf8_len
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.proposals import AuditOp, RefusedDecision
from durable_loop.core.tools import ToolSpec

__all__ = [
    "DEFAULT_APPROVAL_TTL_S",
    "IN_DOUBT_ANSWERS",
    "MAX_SCHEMA_ERRORS",
    "PATCH_IN_DOUBT",
    "PATCH_TOOL_APPROVALS",
    "QUERY_TOOL_APPROVALS",
    "READ_TOOL_CALLS",
    "SIGNAL_TOOL_CALL_DECISION",
    "UPDATE_DECIDE_TOOL_CALL",
    "UPDATE_MESSAGE_RESULT",
    "UPDATE_WITHDRAW_TOOL_POLICY",
    "ApprovalBookState",
    "ApprovalSettings",
    "HoldKind",
    "InDoubtAnswer",
    "MessageResultRequest",
    "PendingToolCall",
    "ReadToolCallsInput",
    "ReadToolCallsOutput",
    "Remember",
    "ToolApprovalList",
    "ToolCallArguments",
    "ToolCallDecided",
    "ToolCallDecision",
    "ToolCallStatus",
    "ToolPolicy",
    "WithdrawToolPolicy",
    "allowed_approvers",
    "audit_op",
    "edit_problem",
    "edited_fields",
    "gated_by_name",
    "hold_fingerprint",
    "needs_approval",
    "policy_allowing",
    "remember_problem",
    "schema_problems",
    "standing_policy",
    "tool_call_fingerprint",
    "with_policy",
]

DEFAULT_APPROVAL_TTL_S = 24 * 3600.0
MAX_SCHEMA_ERRORS = 5


class ApprovalSettings(BaseModel):
    """Which tool calls of a session wait for a person, and for how long."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: list[str] = Field(
        default_factory=list, description="Tool names (globs allowed) whose calls need approval"
    )
    conditions: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict,
        description="Tool name (or glob) -> JSON Schema over the arguments: approval is needed "
        "only when the arguments match it",
    )
    ttl_s: float = Field(
        default=DEFAULT_APPROVAL_TTL_S, gt=0, description="A pending call expires after this"
    )
    approvers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Tool name (or glob) -> the approvers who may decide its calls (the first "
        "matching entry applies; a tool that matches none: anyone). Over HTTP the approver is "
        "the token's identity; over a Temporal Update or Signal, what the caller asserts",
    )

    @field_validator("conditions")
    @classmethod
    def _valid_schemas(
        cls, value: dict[str, dict[str, JsonValue]]
    ) -> dict[str, dict[str, JsonValue]]:
        for name, schema in value.items():
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as err:
                raise ValueError(
                    f"condition for {name!r} is not a JSON Schema: {err.message}"
                ) from err
        return value


def allowed_approvers(tool: str, settings: ApprovalSettings) -> list[str] | None:
    """Who may decide a call of ``tool`` (None: anyone)."""
    for pattern, names in settings.approvers.items():
        if fnmatchcase(tool, pattern):
            return names
    return None


def gated_by_name(spec: ToolSpec, settings: ApprovalSettings) -> bool:
    """The tool may need approval (its condition, if any, decides per call)."""
    return spec.requires_approval or any(fnmatchcase(spec.name, g) for g in settings.tools)


def needs_approval(
    spec: ToolSpec, settings: ApprovalSettings, arguments: dict[str, JsonValue]
) -> bool:
    if not gated_by_name(spec, settings):
        return False
    for pattern, condition in settings.conditions.items():
        if fnmatchcase(spec.name, pattern):
            return not schema_problems(condition, arguments)
    return True


def schema_problems(schema: dict[str, JsonValue], value: JsonValue) -> list[str]:
    """Where ``value`` breaks ``schema``, as "path: message" lines (at most a few)."""
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
        for e in errors[:MAX_SCHEMA_ERRORS]
    ]


def tool_call_fingerprint(tool: str, arguments: dict[str, JsonValue]) -> str:
    """sha256 of the tool name and the canonical arguments: what a person approves."""
    return sha256_hex(f"{tool}\n{canonical_dumps(arguments)}")


def hold_fingerprint(held: PendingToolCall, arguments_fingerprint: str) -> str:
    """What a decision must name under the ``decision-rules`` patch: the call's tool and
    arguments (``arguments_fingerprint``) held at one place (session, message, call id,
    result seq). A decision re-sent later cannot approve another hold of the same call id
    and arguments: that hold has another fingerprint. A call in doubt is a hold of its own
    (after its approval, and again after each "run it again")."""
    place = f"{held.session_id}\n{held.message_id}\n{held.call_id}\n{held.result_seq}"
    if held.kind != "approval":
        place += f"\n{held.kind}:{held.reruns}"
    return sha256_hex(f"{place}\n{arguments_fingerprint}")


def edited_fields(before: dict[str, JsonValue], after: dict[str, JsonValue]) -> list[str]:
    """Top-level arguments a person added, removed or changed."""
    keys = set(before) | set(after)
    return sorted(k for k in keys if k not in before or k not in after or before[k] != after[k])


def edit_problem(
    spec: ToolSpec, arguments: dict[str, JsonValue], max_bytes: int
) -> CodedError | None:
    size = utf8_len(canonical_dumps(arguments))
    if size > max_bytes:
        return CodedError(
            code=ErrorCode.ARGUMENTS_TOO_LARGE,
            message=f"edited arguments are {size} bytes; the limit is {max_bytes}",
        )
    problems = schema_problems(spec.parameters, arguments)
    if problems:
        return CodedError(
            code=ErrorCode.INVALID_ARGS,
            message=f"edited arguments do not fit {spec.name}: {'; '.join(problems)}",
        )
    return None


class ApprovalBookState(BaseModel):
    """Carried across continue-as-new: held calls, recent decisions, refusals and standing
    approvals."""

    pending: list[PendingToolCall] = Field(default_factory=list)
    decided: list[ToolCallDecided] = Field(default_factory=list)
    refused: list[RefusedDecision] = Field(default_factory=list)
    policies: list[ToolPolicy] = Field(default_factory=list)


def policy_allowing(
    policies: list[ToolPolicy], tool: str, arguments: dict[str, JsonValue], now: datetime
) -> ToolPolicy | None:
    """The standing approval that lets this call run without waiting, if one does."""
    for policy in policies:
        if policy.tool != tool or (policy.expires_at is not None and now >= policy.expires_at):
            continue
        if policy.condition is None or not schema_problems(policy.condition, arguments):
            return policy
    return None


def standing_policy(
    tool: str, call_id: str, approver: str, remember: Remember, now: datetime
) -> ToolPolicy:
    """The standing approval ``remember`` sets, from ``now``."""
    return ToolPolicy(
        tool=tool,
        approved_by=approver,
        condition=remember.condition,
        created_at=now,
        expires_at=now + timedelta(seconds=remember.for_s) if remember.for_s else None,
        call_id=call_id,
    )


def with_policy(policies: list[ToolPolicy], policy: ToolPolicy) -> list[ToolPolicy]:
    """``policies`` with ``policy`` in place of one for the same tool and condition."""
    kept = [p for p in policies if p.tool != policy.tool or p.condition != policy.condition]
    return [*kept, policy]


def audit_op(status: ToolCallStatus, edited: bool) -> AuditOp:
    """The audit row's op for a settled call. An answer on a call in doubt is audited as the
    approval ("happened", "run_again") or rejection ("given_up") it amounts to; the row's
    value names the answer."""
    if status == "confirmed":
        return "edit" if edited else "confirm"
    if status in ("happened", "run_again"):
        return "confirm"
    return "reject" if status in ("rejected", "given_up") else "expire"


def remember_problem(decision: ToolCallDecision) -> str | None:
    """Why the decision's ``remember`` cannot be kept (None: it can, or there is none)."""
    remember = decision.remember
    if remember is None:
        return None
    if decision.verdict != "confirm":
        return "only an approval can be remembered"
    if remember.condition is not None:
        try:
            Draft202012Validator.check_schema(remember.condition)
        except SchemaError as err:
            return f"the remembered condition is not a JSON Schema: {err.message}"
    return None


# ---------------------------------------------------------------- activities


class ReadToolCallsInput(BaseModel):
    session_id: str
    assistant_seq: int
    call_indexes: list[int]


class ToolCallArguments(BaseModel):
    call_index: int
    arguments: dict[str, JsonValue] | None = Field(default=None, description="None: unreadable")
    fingerprint: str = ""


class ReadToolCallsOutput(BaseModel):
    calls: list[ToolCallArguments]
