"""retry_after_tool_error: which failures send the model back, and how."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolFailure, ToolRegistry
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.toolkit import ToolLog, recording_tools

RETRYING = RuntimeConfig(retry_after_tool_error=2)


def tools_with_divide(log: ToolLog) -> ToolRegistry:
    extra = ToolRegistry()

    @extra.tool()
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        if b == 0:
            raise ToolFailure("REQUEST_IMPOSSIBLE", "division by zero is undefined")
        return a / b

    return recording_tools(log).merged(extra)


async def run_session(loop_worker, scripted_llm, steps, runtime=RETRYING, text="please"):
    model, sid, log = unique("m"), unique("s"), ToolLog()
    scripted_llm.script(model, steps)
    async with loop_worker(tools_with_divide(log)) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, text)
        stored = await w.store.read(sid)
    return result, scripted_llm.requests(model), stored


async def test_a_request_without_a_result_is_answered_not_retried(loop_worker, scripted_llm):
    result, requests, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("divide", {"a": 10, "b": 0}),
            reply.text("10 divided by 0 is undefined: it cannot be computed."),
        ],
    )
    assert result.status == "completed", result.error
    assert result.reply == "10 divided by 0 is undefined: it cannot be computed."
    assert [(t.name, t.error_codes) for t in result.tool_calls] == [
        ("divide", ["REQUEST_IMPOSSIBLE"])
    ]
    assert len(requests) == 2
    assert not any(m.message.synthetic for m in stored)


async def test_an_ordinary_failure_is_still_sent_back_with_a_tool_required(
    loop_worker, scripted_llm
):
    result, requests, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("flaky", {"reason": "x"}),
            reply.text("Done."),
            reply.tool_call("add", {"a": 1, "b": 1}, "fixed"),
            reply.text("2"),
        ],
    )
    assert result.status == "completed" and result.reply == "2"
    assert requests[2].body["tool_choice"] == "required"
    assert requests[2].messages[-1]["content"].startswith("Your flaky call failed: ")


async def test_an_invented_tool_is_named_and_a_direct_answer_allowed(loop_worker, scripted_llm):
    result, requests, stored = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("say_hello", {}),
            reply.text("Hello!"),
            reply.text("Hello! I am fine, thank you."),
        ],
    )
    assert result.status == "completed" and result.reply == "Hello! I am fine, thank you."
    assert [t.error_codes for t in result.tool_calls] == [["TOOL_NOT_FOUND"]]
    nudge = requests[2].messages[-1]
    assert nudge["role"] == "user"
    assert nudge["content"].startswith("There is no tool named say_hello.")
    assert "divide" in nudge["content"] and "answer the user directly" in nudge["content"]
    assert requests[2].body["tool_choice"] == "auto"
    assert [m.message.synthetic for m in stored if m.message.role == "user"] == [False, True]


async def test_a_missing_tool_the_person_named_still_requires_a_call(loop_worker, scripted_llm):
    """The person asked for state_set by name: a tool action is wanted, so the retry names
    the offered tools and requires a call."""
    result, requests, _ = await run_session(
        loop_worker,
        scripted_llm,
        [
            reply.tool_call("state_set", {"x": 1}),
            reply.text("Done."),
            reply.tool_call("add", {"a": 2, "b": 3}, "right"),
            reply.text("5"),
        ],
        text="Use state_set to add 2 and 3; if it does not exist, use another tool.",
    )
    assert result.status == "completed" and result.reply == "5"
    assert [(t.name, t.ok) for t in result.tool_calls] == [("state_set", False), ("add", True)]
    assert requests[2].messages[-1]["content"].startswith("There is no tool named state_set.")
    assert requests[2].body["tool_choice"] == "required"


async def test_a_rejected_call_is_not_sent_back(loop_worker, scripted_llm, temporal_env):
    """A person's rejection is final: the retry must not ask for the call again."""
    payments, model, sid = Payments(), unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("pay", {"amount": 250, "to": "acme"}, "c1"),
            reply.text("Not paid: it was rejected."),
        ],
    )
    settings = approval_settings(scripted_llm, model, temporal_env, runtime=RETRYING)
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "pay acme 250", message_id=f"msg-{sid}")
        assert first.status == "awaiting_approval", first
        await w.sessions.reject_tool_call(sid, "c1", "bob", comment="wrong supplier")
        final = await w.sessions.message_result(sid, first.message_id)
    assert (final.status, final.reply) == ("completed", "Not paid: it was rejected.")
    assert len(scripted_llm.requests(model)) == 2 and payments.made == []
