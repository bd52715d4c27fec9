"""Tool approvals, the holds: which calls of a turn wait for a person (gated tools, globs,
conditions, the router strategy), and how a held call lives on (a caller waiting for the
final result, continue-as-new). The decisions themselves: test_tool_approvals."""

from __future__ import annotations

import asyncio

import pytest_asyncio
from pydantic import JsonValue

from durable_loop.cli.commands.people_view import call_text
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.core.tool_names import provider_safe_name
from durable_loop.core.tools import ToolSpec
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.held_payment_kit import PAY, held_payment, pay_then
from tests.workflows.proposal_kit import eventually, tool_envelopes


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own, so simulated hours skip only these tests' timers."""
    async with running_test_environment() as env:
        yield env


async def test_gated_and_ungated_calls_of_one_parallel_turn(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        model, sid, first = await held_payment(
            w,
            scripted_llm,
            temporal_env,
            [
                reply.tool_calls(("lookup", {"query": "acme"}, "c0"), ("pay", PAY, "c1")),
                reply.text("Looked up and paid."),
            ],
            runtime=RuntimeConfig(parallel_tool_calls=True),
        )
        assert payments.lookups == ["acme"] and payments.made == []
        assert [p.call_id for p in first.pending_approvals] == ["c1"]
        assert [(t.name, t.executed) for t in first.tool_calls] == [("lookup", True)]
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        final = await w.sessions.message_result(sid, first.message_id)
    assert [(t.name, t.ok) for t in final.tool_calls] == [("lookup", True), ("pay", True)]
    assert len(payments.made) == 1 and payments.lookups == ["acme"]
    envelopes = tool_envelopes(scripted_llm.requests(model)[1])
    assert [e["data"] for e in envelopes] == ["found acme", "paid 250 to acme"]


async def test_session_globs_and_conditions_choose_the_held_calls(
    loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    async with loop_worker(payments.registry()) as w:
        model, sid = unique("m"), unique("s")
        scripted_llm.script(
            model,
            [
                reply.tool_calls(
                    ("refund", {"amount": 50}, "small"), ("refund", {"amount": 500}, "big")
                ),
                reply.text("One refund waits."),
            ],
        )
        settings = approval_settings(
            scripted_llm,
            model,
            temporal_env,
            tools=["ref*"],
            conditions={"refund": {"properties": {"amount": {"minimum": 100}}}},
        )
        await w.sessions.start(sid, settings)
        first = await w.sessions.send(sid, "refund both")
        await w.sessions.reject_tool_call(sid, "big", "bob")
        final = await w.sessions.message_result(sid, first.message_id)
    assert [p.call_id for p in first.pending_approvals] == ["big"]
    assert payments.made == [(-50, "refund", "")]
    assert [(t.call_id, t.error_codes) for t in final.tool_calls] == [
        ("small", []),
        ("big", ["TOOL_CALL_REJECTED"]),
    ]


async def test_waiting_caller_gets_the_final_result(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, pay_then("Paid."))
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        sending = asyncio.ensure_future(w.sessions.send(sid, "pay", wait_for_approval=True))

        async def pending():
            return (await w.sessions.tool_approvals(sid)).pending

        await eventually(pending)
        assert not sending.done()
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        final = await asyncio.wait_for(sending, 30)
    assert (final.status, final.reply, len(payments.made)) == ("completed", "Paid.", 1)


async def test_pending_call_survives_continue_as_new(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    lookups = [reply.tool_call("lookup", {"query": f"q{i}"}, f"l{i}") for i in range(16)]
    runtime = RuntimeConfig(max_turns=30, continue_as_new_after_events=200)
    async with loop_worker(payments.registry()) as w:
        _, sid, first = await held_payment(
            w,
            scripted_llm,
            temporal_env,
            [*lookups, reply.tool_call("pay", PAY, "c1"), reply.text("Paid after all.")],
            runtime=runtime,
        )

        async def continued():
            return (await w.sessions.status(sid)).run_index >= 1

        await eventually(continued)
        listing = await w.sessions.tool_approvals(sid)
        await w.sessions.confirm_tool_call(sid, "c1", "alice")
        final = await w.sessions.message_result(sid, first.message_id)
        histories = await w.histories(sid)
    assert len(histories) >= 2
    assert [p.call_id for p in listing.pending] == ["c1"]
    assert (final.status, final.reply) == ("completed", "Paid after all.")
    assert final.turns == 18 and len(final.tool_calls) == 17
    assert len(payments.made) == 1 and len(payments.lookups) == 16


async def test_the_router_strategy_refuses_gated_tools(loop_worker, scripted_llm, temporal_env):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.text('{"choice": "call_tool", "tool": "pay", "question": null}'),
            reply.text('{"tool": "pay", "args": {"amount": 5, "to": "bob"}}'),
            reply.text("Not paid."),
        ],
    )
    runtime = RuntimeConfig(loop_strategy="router")
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(
            sid, approval_settings(scripted_llm, model, temporal_env, runtime=runtime)
        )
        result = await w.sessions.send(sid, "pay bob 5")
    assert payments.made == []
    assert [(t.name, t.executed, t.error_codes) for t in result.tool_calls] == [
        ("pay", False, ["TOOL_NOT_ALLOWED"])
    ]


async def test_a_held_call_of_a_mapped_tool_names_it_both_ways(
    loop_worker, scripted_llm, temporal_env
):
    """A person deciding sees the tool's own name beside the model-facing one."""
    pay_name = provider_safe_name("bank.pay")
    registry = ToolRegistry()

    async def pay(ctx: ToolContext, amount: int) -> JsonValue:
        return {"paid": amount}

    registry.add(
        ToolSpec(
            name=pay_name,
            original_name="bank.pay",
            requires_approval=True,
            parameters={"type": "object", "properties": {"amount": {"type": "integer"}}},
        ),
        pay,
    )
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call(pay_name, {"amount": 5}, "c1"), reply.text("ok")])
    async with loop_worker(registry) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay 5")
        [held] = (await w.sessions.tool_approvals(sid)).pending
    assert first.status == "awaiting_approval"
    assert (held.tool, held.original_name) == ("bank_pay", "bank.pay")
    assert held.shown_tool == "bank_pay (bank.pay)"
    assert call_text(held, sid) == 'bank_pay (bank.pay) {"amount": 5}'
