"""How the scripted behaviours answer the requests the loop's recoveries send on their own
(no tools, the recovery's system prompt): the argument repairs and the conversation gate.
Each answer is what the scenario's ideal model would do at that point."""

from __future__ import annotations

import json

from durable_loop.core.argument_repair import REPAIR_SYSTEM, SHORTEN_SYSTEM
from durable_loop.core.canonical_json import largest_string
from durable_loop.core.conversation_gate import NONE as GATE_NONE
from durable_loop.core.conversation_gate import SYSTEM as GATE_SYSTEM
from durable_loop.core.errors import ErrorCode
from durable_loop.core.router.prompts import LATEST_MESSAGE
from durable_loop.evals.scenario import Call, ModelView, Scenario, ToolResult
from durable_loop.testing import reply
from durable_loop.testing.scripted import RecordedRequest, Reply


def args_text(call: Call) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


GATE_SYSTEM_START = GATE_SYSTEM.partition("{")[0]


def gate_reply(scenario: Scenario, request: RecordedRequest) -> Reply | None:
    """The answer to a conversation-gate request (no tools, the gate's system prompt): the
    tool the scenario's ideal model calls first for the person's message, or none. None for
    any other request."""
    messages = request.messages
    system = str(messages[0].get("content") or "") if messages else ""
    if request.body.get("tools") or not system.startswith(GATE_SYSTEM_START):
        return None
    shown = str(messages[-1].get("content") or "")
    question = shown.rpartition(LATEST_MESSAGE)[2]
    view = ModelView(results=(), tools_sent=True, last_role="user", last_user=question)
    action = scenario.policy(view)
    return reply.text(json.dumps({"tool": action.calls[0].name if action.calls else GATE_NONE}))


def repair_reply(scenario: Scenario, request: RecordedRequest) -> Reply | None:
    """The answer to an argument-repair request (no tools, the recovery's system prompt):
    the call the scenario's ideal model makes after reading that refusal. None for any
    other request."""
    messages = request.messages
    system = str(messages[0].get("content") or "") if messages else ""
    if request.body.get("tools") or system not in (SHORTEN_SYSTEM, REPAIR_SYSTEM):
        return None
    prompt = str(messages[-1].get("content") or "")
    name = prompt.partition("Function: ")[2].partition("\n")[0].strip()
    if system == SHORTEN_SYSTEM:
        codes: tuple[str, ...] = (ErrorCode.ARGUMENTS_TOO_LARGE,)
    else:
        codes = tuple(c for c in (ErrorCode.INVALID_ARGS, ErrorCode.INVALID_JSON) if c in prompt)
    failed = ToolResult(name=name, ok=False, codes=codes, arguments="{}")
    view = ModelView(results=(failed,), tools_sent=True, last_role="tool", last_user="")
    action = scenario.policy(view)
    if not action.calls:
        return reply.text("I cannot fix that.")
    arguments = args_text(action.calls[0])
    if system == REPAIR_SYSTEM:
        return reply.text(arguments)
    longest = largest_string(arguments)
    value = json.loads(arguments)
    for step in (longest[0] if longest else "").split("/")[1:]:
        value = value[int(step)] if isinstance(value, list) else value[step]
    return reply.text(value if isinstance(value, str) else arguments)
