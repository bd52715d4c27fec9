"""Scenarios with a hostile provider and hostile tools, on a healthy worker: one session per
fault, all at once."""

from __future__ import annotations

import asyncio

from durable_loop.chaos.rig import ChaosRig
from durable_loop.chaos.scenario import Tracker, scenario
from durable_loop.core.contracts import RunResult
from durable_loop.core.errors import ErrorCode
from durable_loop.testing import Reply, reply

RETRY_AFTER_S = 1.0
SLOW_TIMEOUT_S = 1.0
TRUNCATED = '{"id": "chatcmpl-cut", "choices": [{"index": 0, "message": {"role": "assis'


def _transfer(amount: int) -> Reply:
    return reply.tool_call("transfer", {"amount": amount}, "call_pay")


PROVIDER_FAULTS: dict[str, Reply] = {
    "HTTP 429 with Retry-After": reply.error(429, "rate limited", retry_after=RETRY_AFTER_S),
    "HTTP 500": reply.error(500, "internal error"),
    "HTTP 529 overloaded": reply.error(529, "overloaded"),
    "connection reset": Reply(drop_connection=True),
    "slow response past the timeout": reply.slow(reply.text("too late"), 3 * SLOW_TIMEOUT_S),
}


@scenario(
    "provider_faults",
    "429 + Retry-After, 500, 529, connection reset, slow past the timeout (each retried), "
    "truncated JSON (a coded failure; the next message works)",
)
async def provider_faults(rig: ChaosRig, t: Tracker) -> None:
    sessions = rig.sessions
    runs = []
    for index, (kind, fault) in enumerate(PROVIDER_FAULTS.items()):
        sid, model = rig.new_session(f"provider-{index}")
        t.session(sid)
        rig.llm.script(model, [fault, _transfer(index + 1), reply.text(f"done {index}")])
        timeout_s = SLOW_TIMEOUT_S if kind.startswith("slow") else 10.0
        settings = rig.settings(model, timeout_s=timeout_s)
        runs.append(
            (kind, sid, model, sessions.start_and_send(sid, settings, "go", message_id="p1"))
        )
    cut_sid, cut_model = rig.new_session("provider-truncated")
    t.session(cut_sid)
    rig.llm.script(
        cut_model,
        [reply.raw(200, TRUNCATED, "application/json"), reply.text("recovered")],
    )
    cut = sessions.start_and_send(cut_sid, rig.settings(cut_model), "go", message_id="p1")
    results = await asyncio.gather(*(run for *_, run in runs), cut)
    for index, ((kind, sid, model, _), result) in enumerate(zip(runs, results, strict=False)):
        t.fault(kind)
        t.ended(sid, result, reply=f"done {index}")
        t.expect(rig.ledger.effects(sid) == 1, f"{kind}: the transfer ran once")
        if kind.startswith("HTTP 429"):
            requests = rig.llm.requests(model)
            waited = requests[1].received_at - requests[0].received_at
            t.result.details["retry_after_waited_s"] = round(waited, 2)
            t.expect(waited >= 0.9 * RETRY_AFTER_S, f"Retry-After honoured: waited {waited:.2f}s")
    t.fault("truncated JSON body")
    truncated: RunResult = results[-1]
    t.expect(
        truncated.status == "failed"
        and truncated.error is not None
        and truncated.error.code == ErrorCode.PROVIDER_BAD_RESPONSE,
        f"truncated JSON is a coded failure: {truncated.status} {truncated.error}",
    )
    after = await sessions.send(cut_sid, "again", message_id="p2")
    t.ended(cut_sid, after, reply="recovered")


TOOL_FAULTS: dict[str, tuple[str, str, int]] = {
    "tool hangs": ("hang", ErrorCode.TOOL_TIMEOUT, 1),
    "tool raises": ("explode", ErrorCode.TOOL_ERROR, 3),
    "tool returns non-JSON": ("not_json", ErrorCode.TOOL_ERROR, 1),
}


@scenario(
    "tool_faults",
    "tools that hang (timeout), raise (retried, then an error envelope) or return non-JSON; "
    "the model sees a coded error and the message completes",
)
async def tool_faults(rig: ChaosRig, t: Tracker) -> None:
    sessions = rig.sessions
    runs = []
    for tool, _, _ in TOOL_FAULTS.values():
        sid, model = rig.new_session(f"tool-{tool.replace('_', '-')}")
        t.session(sid)
        rig.llm.script(model, [reply.tool_call(tool, {}, "call_bad"), reply.text("handled")])
        runs.append(sessions.start_and_send(sid, rig.settings(model), "go", message_id="t1"))
    results = await asyncio.gather(*runs)
    for (kind, (tool, code, attempts)), sid, result in zip(
        TOOL_FAULTS.items(), t.result.sessions, results, strict=True
    ):
        t.fault(kind)
        t.ended(sid, result, reply="handled")
        codes = [c.error_codes for c in result.tool_calls]
        t.expect(codes == [[code]], f"{kind}: outcome codes {codes}, expected [[{code}]]")
        invoked = await asyncio.to_thread(rig.ledger.invocations, sid, tool)
        t.expect(len(invoked) == attempts, f"{kind}: {len(invoked)} invocations, not {attempts}")
