"""Record ``histories/decision_rules_before_change.json``: a session whose held ``pay`` call
is approved by an Update naming ``ali\\x07ce`` (a name patch ``decision-rules`` refuses)
with the fingerprint of tool and arguments alone, then completes. Never regenerated. From
the repository root::

    .venv/bin/python -m tests.versioning.record_decision_rules

Recorded with the books' ``start`` as it was before the patch (they did not ask for
``decision-rules``): every change of the patch is behind that one flag, so the history is
the one the code before it records.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from temporalio import workflow

from durable_loop.client.sessions import SessionClient
from durable_loop.testing import ScriptedLLM, reply
from durable_loop.workflows import approvals, proposals
from tests.conftest import settings_for
from tests.versioning.record import recorded, write
from tests.versioning.record_cancel_parked import payer

HISTORY = Path(__file__).parent / "histories" / "decision_rules_before_change.json"
SESSION = "decision-rules-before-change"
APPROVER = "ali\x07ce"


async def converse(sessions: SessionClient, llm: ScriptedLLM) -> None:
    llm.script(
        "before-rules",
        [reply.tool_call("pay", {"amount": 5, "to": "acme"}, "c1"), reply.text("Paid.")],
    )
    await sessions.start(SESSION, settings_for(llm, "before-rules"))
    first = await sessions.send(SESSION, "pay acme 5", message_id="m1")
    [held] = first.pending_approvals
    await sessions.decide_tool_call(SESSION, held.decision("confirm", APPROVER))
    final = await sessions.message_result(SESSION, "m1")
    assert final.status == "completed", final
    await sessions.close(SESSION)


def approvals_before_patch(self: approvals.ApprovalBook) -> None:
    self.keeps_held = workflow.patched(approvals.KEEP_PATCH)
    for call_id in self.pending:
        self._arm(call_id)


def proposals_before_patch(self: proposals.ProposalBook) -> None:
    for proposal_id in self.pending:
        self._arm(proposal_id)


async def record() -> Path:
    approvals.ApprovalBook.start = approvals_before_patch  # type: ignore[method-assign]
    proposals.ProposalBook.start = proposals_before_patch  # type: ignore[method-assign]
    return write(await recorded(payer(), SESSION, converse), HISTORY)


if __name__ == "__main__":
    asyncio.run(record())
