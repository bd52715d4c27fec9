"""Outcome notes moved before the person's new message: not a command change.

``histories/notes_after_user_message.json`` was recorded by the workflow as it was before
(a proposal confirmed, then "thanks": the note came after it). The change reorders the
appends of the next ``llm_turn`` and nothing else, so that history replays against the
current code without a patch. (A ``workflow.patched`` call here would add a marker right
after the catalog's local activity, which core does not always replay in the same
activation: a flaky nondeterminism error.)
"""

from __future__ import annotations

from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.core import names
from durable_loop.core.activity_contracts import LlmTurnInput
from durable_loop.testing.history import EventType, events_of, replay_failures

HISTORY = Path(__file__).parent / "histories" / "notes_after_user_message.json"


def recorded() -> WorkflowHistory:
    return WorkflowHistory.from_json("session-notes-after", HISTORY.read_text())


async def llm_inputs(history: WorkflowHistory) -> list[LlmTurnInput]:
    inputs = []
    for event in events_of(history, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED):
        attributes = event.activity_task_scheduled_event_attributes
        if attributes.activity_type.name == names.LLM_TURN:
            decoded = await pydantic_data_converter.decode(
                attributes.input.payloads, [LlmTurnInput]
            )
            inputs.append(decoded[0])
    return inputs


async def test_the_history_holds_the_old_order():
    last = (await llm_inputs(recorded()))[-1]
    users = [a.message for a in last.appends if a.message and a.message.role == "user"]
    assert [(m.synthetic, m.content == "thanks") for m in users] == [(False, True), (True, False)]


async def test_it_replays_against_the_current_code():
    assert await replay_failures([recorded()]) == {}
