"""The prompt plan's fingerprint covers the request surface and nothing else."""

from __future__ import annotations

from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.tools import ToolSpec

MESSAGES = [Message.system("s"), Message.user("hi")]
PLAN = PromptPlan(
    model="m",
    session_id="one",
    upto_seq=3,
    tools=[ToolSpec(name="add", description="Add.")],
    tool_choice="auto",
    llm_options={"temperature": 0.2},
)


def test_same_surface_same_fingerprint_across_sessions_and_seqs():
    other = PLAN.model_copy(update={"session_id": "two", "upto_seq": 99})
    assert PLAN.fingerprint(MESSAGES) == other.fingerprint(MESSAGES)


def test_every_part_of_the_surface_changes_the_fingerprint():
    base = PLAN.fingerprint(MESSAGES)
    variants = [
        {"model": "m2"},
        {"provider": "anthropic"},
        {"tools": [ToolSpec(name="add", description="Add two.")]},
        {"tools": []},
        {"tool_choice": "required"},
        {"llm_options": {"temperature": 0.3}},
        {"transforms": ["tool_result_compact_envelope"]},
    ]
    prints = {PLAN.model_copy(update=v).fingerprint(MESSAGES) for v in variants}
    assert base not in prints and len(prints) == len(variants)
    assert PLAN.fingerprint([*MESSAGES, Message.user("more")]) != base
