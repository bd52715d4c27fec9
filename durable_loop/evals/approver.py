"""A scripted person for scenarios with gated tools: decides every call a message holds
(as the scenario's approver says) until the message's final result is there."""

from __future__ import annotations

import asyncio

from durable_loop.client.sessions import SessionClient
from durable_loop.core.contracts import RunResult
from durable_loop.evals.scenario import Approver

APPROVER = "eval-approver"
POLL_S = 0.1


async def decide_until_final(
    sessions: SessionClient, session_id: str, message_id: str, approver: Approver
) -> RunResult:
    final = asyncio.ensure_future(sessions.message_result(session_id, message_id))
    decided: set[str] = set()
    try:
        while not final.done():
            for call in (await sessions.tool_approvals(session_id)).pending:
                if call.message_id != message_id or call.call_id in decided:
                    continue
                decided.add(call.call_id)
                said = approver(call)
                decision = call.decision(
                    said.verdict, APPROVER, comment=said.comment, arguments=said.arguments
                )
                await sessions.decide_tool_call(session_id, decision)
            await asyncio.wait({final}, timeout=POLL_S)
        return final.result()
    finally:
        final.cancel()
