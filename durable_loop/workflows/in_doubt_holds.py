"""Calls in doubt held in the :class:`~durable_loop.workflows.approvals.ApprovalBook`.

A ``effect="once"`` call whose attempt stopped with no result is held (kind ``in_doubt``,
patch ``in-doubt-to-person``) until a person answers ``happened``, ``run_again`` or
``give_up``. These are the rules that differ from an approval: which answers it takes,
the status each answer settles it with, and what its audit row adds.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic import JsonValue

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.approvals import (
        IN_DOUBT_ANSWERS,
        PendingToolCall,
        ToolCallDecision,
        ToolCallStatus,
    )
    from durable_loop.core.decider_rules import comment_problem
    from durable_loop.core.errors import ErrorCode

from durable_loop.workflows.refusals import refuse


def decided_status(pending: PendingToolCall, verdict: str) -> ToolCallStatus:
    if pending.kind == "approval":
        return "confirmed" if verdict == "confirm" else "rejected"
    return (
        "given_up" if verdict == "give_up" else "happened" if verdict == "happened" else "run_again"
    )


def doubt_key(pending: PendingToolCall) -> str:
    """The audit key's part that tells a call's answers in doubt from its approval."""
    return f":in-doubt:{pending.reruns}" if pending.kind == "in_doubt" else ""


def answer_checked(pending: PendingToolCall, decision: ToolCallDecision) -> str:
    """The verdict for the checks every decision passes: a call in doubt takes only
    its own answers (then checked as an approval would be), an approval none of them."""
    answer = decision.verdict in IN_DOUBT_ANSWERS
    if pending.kind == "in_doubt" and not answer:
        raise refuse(
            ErrorCode.INVALID_DECISION,
            f"tool call {pending.call_id} is in doubt: answer one of "
            f"{', '.join(IN_DOUBT_ANSWERS)}; the decision says {decision.verdict!r}",
        )
    if decision.result is not None and decision.verdict != "happened":
        raise refuse(ErrorCode.INVALID_DECISION, "only the answer 'happened' carries a result")
    problem = comment_problem(decision.result)
    if problem is not None:
        raise refuse(ErrorCode.INVALID_DECISION, problem.replace("comment", "result"))
    return "confirm" if answer and pending.kind == "in_doubt" else decision.verdict


def doubt_audit(
    pending: PendingToolCall, status: ToolCallStatus, result: str | None
) -> dict[str, JsonValue]:
    """What a settled call's audit row adds when it was in doubt (nothing otherwise)."""
    if pending.kind != "in_doubt":
        return {}
    value: dict[str, JsonValue] = {
        "in_doubt": pending.doubt,
        "answer": status,
        "reruns": pending.reruns,
    }
    if result is not None and status == "happened":
        value["result"] = result
    return value
