"""Hostile turns through ``guards.plan_turn``: one decision per call, in order, and nothing
executes that is unregistered, masked, oversized, malformed, repeated or over the limit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from durable_loop.core.activity_contracts import ToolCallSummary
from durable_loop.core.canonical_json import arguments_fingerprint, utf8_len
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.errors import ErrorCode
from durable_loop.core.guards import call_key, plan_turn
from tests.hostile.budget import fuzz, hit
from tests.hostile.strategies import NASTY_TEXT

REGISTERED = {"read", "write", "delete_everything"}
SOME_NAMES = st.sampled_from([*REGISTERED, "facts_commit", "state_patch", "READ", "read ", ""])
NAMES = st.one_of(SOME_NAMES, SOME_NAMES, SOME_NAMES, NASTY_TEXT)
SOME_IDS = st.sampled_from(["c1", "c2", "c3", "c4", ""])
IDS = st.one_of(SOME_IDS, SOME_IDS, SOME_IDS, NASTY_TEXT)
ARGUMENTS = st.one_of(
    st.sampled_from(["{}", '{"a": 1}', '{"a":1}', "{bad", "[]", '{"a": NaN}', "", "x" * 300]),
    NASTY_TEXT,
)
"""Arguments matter to the guard only through size, validity and hash: cheap ones suffice
(RAW_ARGUMENTS is fuzzed through the same fingerprint in test_dispatch_fuzz)."""


@st.composite
def summaries(draw: st.DrawFn) -> list[ToolCallSummary]:
    calls = []
    for index in range(draw(st.integers(0, 8))):
        raw = draw(ARGUMENTS)
        valid, digest = arguments_fingerprint(raw)
        calls.append(
            ToolCallSummary(
                index=index,
                id=draw(IDS),
                name=draw(NAMES),
                args_bytes=utf8_len(raw),
                args_sha256=digest,
                args_valid_json=valid,
            )
        )
    return calls


CONFIGS = st.builds(
    RuntimeConfig,
    max_tool_args_bytes=st.sampled_from([1, 100, 200_000]),
    max_tool_calls_per_turn=st.none() | st.integers(1, 4),
    parallel_tool_calls=st.none() | st.booleans(),
    tool_denylist=st.lists(st.sampled_from(sorted(REGISTERED)), max_size=2),
    repeated_call_guard=st.booleans(),
)


@fuzz(1000)
@given(
    calls=summaries(),
    config=CONFIGS,
    tools_sent=st.booleans(),
    seen=st.dictionaries(st.sampled_from(["read", "write"]), st.integers(0, 50), max_size=2),
    first_seq=st.integers(0, 10**6),
)
def test_plan_turn_refuses_everything_it_must(
    calls: list[ToolCallSummary],
    config: RuntimeConfig,
    tools_sent: bool,
    seen: dict[str, int],
    first_seq: int,
) -> None:
    hit("guards: plan_turn")
    visible = REGISTERED - set(config.tool_denylist)
    seen_calls = {call_key(name, c.args_sha256): seq for c in calls for name, seq in seen.items()}
    plan = plan_turn(
        calls,
        registered=REGISTERED,
        visible=visible,
        tools_sent=tools_sent,
        config=config,
        seen_calls=seen_calls,
        first_result_seq=first_seq,
        patched=lambda _patch_id: True,
        refused_unknown={},
    )
    assert [d.call for d in plan.decisions] == calls
    assert [d.result_seq for d in plan.decisions] == [first_seq + i for i in range(len(calls))]
    limit = config.effective_max_tool_calls_per_turn()
    ids: set[str] = set()
    for position, decision in enumerate(plan.decisions):
        call = decision.call
        over_limit = limit is not None and position >= limit
        if decision.action == "reject":
            assert decision.error is not None and decision.error.code in set(ErrorCode)
            assert decision.error.message
        if over_limit:
            assert decision.ignored and decision.error is not None
            assert decision.error.code == ErrorCode.TOO_MANY_TOOL_CALLS
            continue
        repeated_id = call.id in ids
        ids.add(call.id)
        if decision.action == "reject":
            continue
        # Executed or reused: every check passed.
        assert not repeated_id
        assert call.name in visible and tools_sent
        assert call.args_valid_json and call.args_bytes <= config.max_tool_args_bytes
        key = call_key(call.name, call.args_sha256)
        if decision.action == "reuse":
            assert config.uses("repeated_call_guard") and decision.reuse_seq == seen_calls[key]
        else:
            assert not (config.uses("repeated_call_guard") and key in seen_calls)
    unregistered = [d for d in plan.decisions if d.call.name not in REGISTERED]
    assert all(d.action == "reject" for d in unregistered)
    assert plan.ignored == sum(d.ignored for d in plan.decisions)
