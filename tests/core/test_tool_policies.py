"""Standing approvals (approve and remember): which calls a policy lets run, and which
``remember`` a decision may carry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durable_loop.core.approvals import (
    Remember,
    ToolCallDecision,
    ToolPolicy,
    policy_allowing,
    remember_problem,
)

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
SMALL = {"properties": {"amount": {"maximum": 100}}}


def policy(**fields) -> ToolPolicy:
    return ToolPolicy.model_validate(
        {"tool": "pay", "approved_by": "alice", "created_at": NOW, "call_id": "c1", **fields}
    )


def test_a_policy_allows_its_tool_within_its_condition_until_it_expires():
    until = policy(condition=SMALL, expires_at=NOW + timedelta(hours=1))
    small, large = {"amount": 50}, {"amount": 500}
    assert policy_allowing([until], "pay", small, NOW) is until
    assert policy_allowing([until], "pay", large, NOW) is None
    assert policy_allowing([until], "refund", small, NOW) is None
    assert policy_allowing([until], "pay", small, NOW + timedelta(minutes=59)) is until
    assert policy_allowing([until], "pay", small, NOW + timedelta(hours=1)) is None
    forever = policy()
    assert policy_allowing([until, forever], "pay", large, NOW + timedelta(days=9)) is forever


def test_only_a_confirmation_with_a_valid_condition_can_be_remembered():
    def decided(verdict: str, condition=None) -> ToolCallDecision:
        remember = Remember(condition=condition)
        return ToolCallDecision(call_id="c1", verdict=verdict, approver="a", remember=remember)

    assert remember_problem(decided("confirm", SMALL)) is None
    assert remember_problem(decided("reject")) == "only an approval can be remembered"
    problem = remember_problem(decided("confirm", {"type": 12}))
    assert problem is not None and problem.startswith("the remembered condition is not a JSON")
