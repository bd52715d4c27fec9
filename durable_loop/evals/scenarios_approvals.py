"""The tool-approval scenario: the model pays three invoices with a gated tool, and a
scripted approver confirms one, confirms one with an edited amount and rejects one. The
checks read the transcript (what the model was told), the audit rows and how often the
tool actually ran."""

from __future__ import annotations

import threading

from pydantic import JsonValue

from durable_loop.core.approvals import PendingToolCall
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.evals.approver import APPROVER
from durable_loop.evals.scenario import (
    FINAL_RULE,
    Action,
    ApproverVerdict,
    Call,
    ModelView,
    Scenario,
    Trace,
    finished,
)

INVOICES = {"A-1": 120, "B-2": 300, "C-3": 50}
EDITED: dict[str, JsonValue] = {"invoice": "B-2", "amount": 250}
REJECTION = "already paid by bank transfer"
_payments: dict[str, list[tuple[str, int]]] = {}
_lock = threading.Lock()


def payments_of(session_id: str) -> list[tuple[str, int]]:
    """The payments ``pay_invoice`` made in a session (the worker runs in this process)."""
    with _lock:
        return list(_payments.get(session_id, []))


def invoice_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(requires_approval=True)
    def pay_invoice(invoice: str, amount: int, ctx: ToolContext) -> str:
        """Pay an invoice; a person approves every payment before it is made."""
        with _lock:
            _payments.setdefault(ctx.session_id, []).append((invoice, amount))
        return f"paid {amount} for {invoice}"

    return registry


def _pay_all(view: ModelView) -> Action:
    if any(r.name == "pay_invoice" for r in view.results) or not view.tools_sent:
        return Action.final()
    calls = (Call("pay_invoice", {"invoice": i, "amount": a}) for i, a in INVOICES.items())
    return Action(calls=tuple(calls))


def approve_edit_reject(call: PendingToolCall) -> ApproverVerdict:
    invoice = call.arguments.get("invoice")
    if invoice == "A-1":
        return ApproverVerdict("confirm")
    if invoice == "B-2":
        return ApproverVerdict("confirm", arguments=dict(EDITED), comment="agreed discount")
    return ApproverVerdict("reject", comment=REJECTION)


def _results(transcript: list[Message]) -> dict[str, Message]:
    """Tool results by the invoice of their call."""
    invoices: dict[str, str] = {}
    for message in transcript:
        for call in message.tool_calls:
            for invoice in INVOICES:
                if invoice in call.arguments:
                    invoices[call.id] = invoice
    return {
        invoices[m.tool_call_id]: m
        for m in transcript
        if m.role == "tool" and m.tool_call_id in invoices
    }


def _check(trace: Trace) -> list[str]:
    problems = finished(trace)
    results = _results(trace.transcript)
    told = {k: m.envelope for k, m in results.items() if m.envelope is not None}
    if set(told) != set(INVOICES):
        return [*problems, f"tool results for {sorted(told)}, not for every invoice"]
    if not (told["A-1"].ok and told["A-1"].data == "paid 120 for A-1"):
        problems.append(f"A-1 (confirmed) was told {told['A-1'].to_content()}")
    edited = told["B-2"]
    if not (
        edited.ok and edited.data == "paid 250 for B-2" and "amount" in " ".join(edited.warnings)
    ):
        problems.append(f"B-2 (edited) was told {edited.to_content()}")
    rejected = told["C-3"]
    if rejected.error_codes != [ErrorCode.TOOL_CALL_REJECTED] or REJECTION not in str(
        rejected.errors[0].message
    ):
        problems.append(f"C-3 (rejected) was told {rejected.to_content()}")
    audit = sorted(trace.audit)
    expected = sorted([("confirm", APPROVER), ("edit", APPROVER), ("reject", APPROVER)])
    if audit != expected:
        problems.append(f"audit rows {audit}, expected {expected}")
    made = sorted(payments_of(trace.session_id))
    if made != [("A-1", 120), ("B-2", 250)]:
        problems.append(f"payments made {made}: expected A-1 120 and B-2 250, once each")
    return problems


APPROVAL_GATE = Scenario(
    name="approval_gate",
    prompt="Pay the invoices A-1 (120), B-2 (300) and C-3 (50) with pay_invoice, one call "
    "each, all at once. " + FINAL_RULE,
    policy=_pay_all,
    check=_check,
    runtime={"parallel_tool_calls": True},
    extra_tools=invoice_tools,
    approver=approve_edit_reject,
    description="a gated tool: a person confirms, edits and rejects; each runs at most once",
)

APPROVALS = (APPROVAL_GATE,)
