"""plan_turn: what the workflow decides for each call before anything executes."""

from __future__ import annotations

from durable_loop.core.activity_contracts import ToolCallSummary
from durable_loop.core.canonical_json import arguments_fingerprint, utf8_len
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.guards import call_key, plan_turn

REGISTERED = {"add", "read_file", "secret"}
VISIBLE = {"add", "read_file"}


def call(
    name: str,
    arguments: str = "{}",
    call_id: str | None = None,
    index: int = 0,
    unsaid: list[str] | None = None,
):
    valid, digest = arguments_fingerprint(arguments)
    return ToolCallSummary(
        index=index,
        id=call_id or f"id_{index}",
        name=name,
        args_bytes=utf8_len(arguments),
        args_sha256=digest,
        args_valid_json=valid,
        args_unsaid=unsaid or [],
    )


def plan(calls, config=RuntimeConfig(), seen=None, tools_sent=True, patched=None, refused=None):
    asked: list[str] = []

    def patch(patch_id: str) -> bool:
        asked.append(patch_id)
        return patched is None or patch_id in patched

    result = plan_turn(
        calls,
        registered=REGISTERED,
        visible=VISIBLE,
        tools_sent=tools_sent,
        config=config,
        seen_calls=seen or {},
        first_result_seq=10,
        patched=patch,
        refused_unknown=refused or {},
    )
    ASKED[:] = asked
    return result


ASKED: list[str] = []
"""The patches the last ``plan`` asked for."""


def summary(result):
    return [(d.action, d.error.code if d.error else None, d.result_seq) for d in result.decisions]


def test_valid_calls_execute_with_consecutive_seqs():
    result = plan([call("add", '{"a": 1}', index=0), call("read_file", "{}", index=1)])
    assert summary(result) == [("execute", None, 10), ("execute", None, 11)]
    assert result.ignored == 0 and result.repeated is False


def test_each_refusal_gets_its_code():
    calls = [
        call("nope", index=0),
        call("secret", index=1),
        call("add", "[1, 2]", index=2),
        call("add", '{"a": ', index=3),
        call("add", "{}", call_id="id_0", index=4),
    ]
    assert [s[1] for s in summary(plan(calls))] == [
        "TOOL_NOT_FOUND",
        "TOOL_NOT_ALLOWED",
        "INVALID_JSON",
        "INVALID_JSON",
        "DUPLICATE_CALL_ID",
    ]


def test_blank_arguments_count_as_an_empty_object():
    assert summary(plan([call("add", "  ")])) == [("execute", None, 10)]


def test_arguments_over_the_limit_are_refused_before_json_checks():
    config = RuntimeConfig(max_tool_args_bytes=10)
    result = plan([call("add", '{"text": "' + "é" * 10 + '"}')], config)
    assert summary(result) == [("reject", "ARGUMENTS_TOO_LARGE", 10)]
    assert "the limit is 10" in result.decisions[0].error.message


def test_every_call_is_refused_when_tools_were_not_sent():
    result = plan([call("add")], tools_sent=False)
    assert summary(result) == [("reject", "TOOL_NOT_ALLOWED", 10)]


def test_per_turn_limit_marks_the_extra_calls_ignored():
    calls = [call("add", f'{{"a": {i}}}', index=i) for i in range(4)]
    result = plan(calls, RuntimeConfig(max_tool_calls_per_turn=2))
    assert [d.action for d in result.decisions] == ["execute", "execute", "reject", "reject"]
    assert [d.ignored for d in result.decisions] == [False, False, True, True]
    assert result.ignored == 2
    assert result.decisions[2].error.code == "TOO_MANY_TOOL_CALLS"


def test_parallel_tool_calls_false_limits_to_one_call():
    result = plan(
        [call("add", index=0), call("read_file", index=1)], RuntimeConfig(parallel_tool_calls=False)
    )
    assert [d.action for d in result.decisions] == ["execute", "reject"]
    assert result.ignored == 1


def test_repeated_identical_call_is_reused_whatever_the_key_order():
    first = call("add", '{"a": 1, "b": 2}')
    seen = {call_key("add", first.args_sha256): 4}
    result = plan([call("add", '{ "b": 2, "a": 1 }', index=0)], seen=seen)
    assert result.repeated is True
    assert result.decisions[0].action == "reuse" and result.decisions[0].reuse_seq == 4
    assert result.decisions[0].made_up is False


def test_repeated_call_guard_can_be_disabled():
    first = call("add", '{"a": 1}')
    seen = {call_key("add", first.args_sha256): 4}
    result = plan([first], RuntimeConfig(repeated_call_guard=False), seen=seen)
    assert summary(result) == [("execute", None, 10)] and result.repeated is False


def test_different_arguments_are_not_a_repeat():
    seen = {call_key("add", call("add", '{"a": 1}').args_sha256): 4}
    result = plan([call("add", '{"a": 2}')], seen=seen)
    assert summary(result) == [("execute", None, 10)]


def test_a_made_up_tool_called_again_identically_is_a_repeat_under_its_patch():
    made_up = call("piano_tips", '{"piano": "upright"}')
    refused = {call_key("piano_tips", made_up.args_sha256): 6}
    result = plan([made_up], refused=refused)
    assert result.repeated is True and ASKED == ["repeat-unknown-tool-call"]
    assert result.decisions[0].action == "reuse" and result.decisions[0].reuse_seq == 6
    assert result.decisions[0].made_up is True


def test_a_made_up_tool_is_refused_the_first_time_with_other_arguments_or_unpatched():
    made_up = call("piano_tips", '{"piano": "upright"}')
    refused = {call_key("piano_tips", made_up.args_sha256): 6}
    other = call("piano_tips", '{"piano": "grand"}')
    assert summary(plan([made_up])) == [("reject", "TOOL_NOT_FOUND", 10)] and ASKED == []
    assert summary(plan([other], refused=refused)) == [("reject", "TOOL_NOT_FOUND", 10)]
    unpatched = plan([made_up], refused=refused, patched=set())
    assert summary(unpatched) == [("reject", "TOOL_NOT_FOUND", 10)] and not unpatched.repeated
    off = plan([made_up], RuntimeConfig(repeated_call_guard=False), refused=refused)
    assert summary(off) == [("reject", "TOOL_NOT_FOUND", 10)] and ASKED == []


def test_a_refusal_other_than_an_unknown_tool_is_never_a_repeat():
    hidden = call("secret")
    result = plan([hidden], refused={call_key("secret", hidden.args_sha256): 6})
    assert summary(result) == [("reject", "TOOL_NOT_ALLOWED", 10)] and ASKED == []


def test_too_large_arguments_name_the_value_to_shorten():
    config = RuntimeConfig(max_tool_args_bytes=100)
    big = call("add", '{"ops": [{"op": "add", "path": "/note", "value": "' + "x" * 150 + '"}]}')
    big = big.model_copy(update={"args_largest": "/ops/0/value (150 chars)"})
    [decision] = plan([big], config).decisions
    message = decision.error.message
    assert "The longest value is /ops/0/value (150 chars)" in message
    assert f"at least {big.args_bytes - 100} characters shorter" in message
    assert "call add again" in message


UNASKED = RuntimeConfig(recoveries=["refuse_unasked_call"])


def test_an_unasked_call_after_another_tools_call_is_refused():
    seen = {call_key("add", "x"): 3}
    made_up = call("read_file", '{"path": "/etc/motd"}', unsaid=["path"])
    result = plan([made_up], config=UNASKED, seen=seen)
    assert summary(result) == [("reject", "ARGUMENTS_NOT_GIVEN", 10)]
    assert result.unasked is not None and result.unasked.call == made_up
    assert "path" in result.decisions[0].error.message
    assert ASKED == ["refuse-unasked-call"]


def test_in_one_turn_the_call_after_an_executed_one_is_refused():
    calls = [call("add", '{"a": 1}', index=0), call("read_file", "{}", index=1, unsaid=["path"])]
    result = plan(calls, config=UNASKED)
    assert summary(result) == [("execute", None, 10), ("reject", "ARGUMENTS_NOT_GIVEN", 11)]


def test_unasked_calls_run_when_nothing_ran_before_or_the_tool_already_ran_or_off():
    seen = {call_key("add", "x"): 3}
    first = call("read_file", unsaid=["path"])
    again = call("add", '{"a": 7}', unsaid=["a"])
    assert summary(plan([first], config=UNASKED)) == [("execute", None, 10)]
    assert summary(plan([again], config=UNASKED, seen=seen)) == [("execute", None, 10)]
    assert summary(plan([first], seen=seen)) == [("execute", None, 10)]
    assert ASKED == []
    refused_later = plan([first], config=UNASKED, seen=seen, patched=set())
    assert summary(refused_later) == [("execute", None, 10)] and refused_later.unasked is None
    assert ASKED == ["refuse-unasked-call"]


def test_a_said_call_of_another_tool_runs():
    seen = {call_key("add", "x"): 3}
    result = plan([call("read_file", '{"path": "notes.txt"}')], config=UNASKED, seen=seen)
    assert summary(result) == [("execute", None, 10)] and result.unasked is None


ASK = RuntimeConfig(recoveries=["ask_for_unsaid_values"])
BOTH = RuntimeConfig(recoveries=["refuse_unasked_call", "ask_for_unsaid_values"])


def test_a_first_call_with_values_nobody_gave_is_refused_to_ask_for_them():
    made_up = call("add", '{"a": 120, "b": 10}', unsaid=["a", "b"])
    result = plan([made_up], config=ASK)
    assert summary(result) == [("reject", "ARGUMENTS_NOT_GIVEN", 10)]
    assert result.unasked is not None and result.unasked.call == made_up
    assert result.unasked_by == "ask_for_unsaid_values"
    message = result.decisions[0].error.message
    assert "a, b" in message and "ask for them" in message
    assert ASKED == ["ask-for-unsaid-values"]


def test_the_first_call_is_asked_about_and_later_ones_refused_by_their_own_recovery():
    first = plan([call("add", unsaid=["a"])], config=BOTH)
    assert first.unasked_by == "ask_for_unsaid_values"
    assert ASKED == ["ask-for-unsaid-values"]
    later = plan([call("read_file", unsaid=["path"])], config=BOTH, seen={call_key("add", "x"): 3})
    assert later.unasked_by == "refuse_unasked_call" and ASKED == ["refuse-unasked-call"]
    in_one_reply = plan(
        [call("add", index=0), call("read_file", index=1, unsaid=["path"])], config=BOTH
    )
    assert summary(in_one_reply) == [("execute", None, 10), ("reject", "ARGUMENTS_NOT_GIVEN", 11)]
    assert in_one_reply.unasked_by == "refuse_unasked_call"


def test_a_first_call_runs_when_its_values_were_given_or_the_recovery_is_off_or_unpatched():
    said = plan([call("add", '{"a": 1}')], config=ASK)
    assert summary(said) == [("execute", None, 10)] and said.unasked is None and ASKED == []
    off = plan([call("add", unsaid=["a"])], config=UNASKED)
    assert summary(off) == [("execute", None, 10)] and ASKED == []
    old = plan([call("add", unsaid=["a"])], config=ASK, patched=set())
    assert summary(old) == [("execute", None, 10)] and old.unasked_by is None
    assert ASKED == ["ask-for-unsaid-values"]
