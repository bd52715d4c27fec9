"""Your own workflow, with a durable-loop session as a child workflow.

``TicketTriage`` asks a session how urgent a support ticket is (the model may look up the
customer's plan with a tool), then, in the same conversation, for a reply to the customer.
Each question is one child session (``run_child_session``): the parent cannot send the
session an Update from workflow code, so the child takes its messages in its start input,
answers them and returns the results. The second child continues the first one's
conversation from its ``carried`` state.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durable_loop import ChildSessionResult, SessionSettings, run_child_session
    from examples.child_session.models import TriageOutcome, TriageRequest

TASK_QUEUE = "child-session-example"
PRIORITIES = ("urgent", "normal", "low")
SYSTEM_PROMPT = (
    "You triage support tickets. Look up the customer's plan before you judge urgency: "
    "enterprise customers' outages are urgent."
)


def answered(result: ChildSessionResult) -> str:
    last = result.results[-1]
    if last.status != "completed" or not last.reply:
        raise ApplicationError(f"session {result.session_id} gave no answer: {last.error}")
    return last.reply


@workflow.defn
class TicketTriage:
    @workflow.run
    async def run(self, request: TriageRequest) -> TriageOutcome:
        session_id = f"ticket-{request.ticket_id}"
        settings = SessionSettings(
            llm=request.llm, system_prompt=SYSTEM_PROMPT, title=f"Ticket {request.ticket_id}"
        )
        triage = await run_child_session(
            session_id,
            settings,
            f"Customer {request.customer!r} writes: {request.text}\n"
            "How urgent is this? Answer with one word: urgent, normal or low.",
        )
        words = answered(triage).lower()
        priority = next((p for p in PRIORITIES if p in words), "normal")
        draft = await run_child_session(
            session_id,
            settings,
            "Draft a two-sentence reply to the customer.",
            carried=triage.carried,
        )
        results = [*triage.results, *draft.results]
        return TriageOutcome(
            ticket_id=request.ticket_id,
            priority=priority,
            customer_reply=answered(draft),
            tools_called=[call.name for r in results for call in r.tool_calls],
            turns=sum(r.turns for r in results),
        )
