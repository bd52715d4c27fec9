"""The conversation gate: before a person's message is sent with tools, one short request
asks whether the message asks for a tool at all.

A small model offered tools calls one for nearly every message, "thanks, that's all"
included (the packaged Qwen2.5-Coder-1.5B saved such messages as notes: 15 of 21
no-request messages made a call). Asked separately, as a choice between the tools' names
and ``none``, constrained to that JSON where the provider can (``response_format``
json_schema / ``responseJsonSchema``), and shown a few conversation turns answered
``none`` first, it tells conversation from requests; on ``none`` the message's turns are
sent without tools (recovery ``withhold_tools_from_conversation``). A later message is
shown after the conversation's last text, since "yes please" asks for a tool only after
"shall I save it?".

The gate only ever withholds: an answer it cannot read, or a failed request, leaves the
tools offered, as they were before the gate. Pure.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message, Usage
from durable_loop.core.router.prompts import with_context
from durable_loop.core.tools import ToolSpec
from durable_loop.core.typed_output.request import output_mode

NONE = "none"
SCHEMA_NAME = "conversation_gate"
MAX_TOKENS = 32
SUMMARY_CHARS = 200
CONTEXT_CHARS = 500
QUESTION_CHARS = 2_000
SYSTEM = (
    "You route a user's message to a tool. Tools:\n{listing}\n"
    'Answer with the tool the message asks you to use, or "none" if the message asks for '
    "nothing a tool does (greetings, thanks, questions about you)."
)


class GateTool(BaseModel):
    name: str
    summary: str = ""
    """The first line of the tool's description, cut at 200 characters."""


class ConversationGateInput(BaseModel):
    """One gate request for the person's message, which goes to the store with the
    message's first turn at ``user_seq``; ``question`` is its text, cut at 2,000
    characters."""

    session_id: str
    user_seq: int
    turn: int
    endpoint: LlmEndpoint
    question: str
    tools: list[GateTool]
    examples: list[str]
    """Conversation turns shown answered ``none`` before the message (the recovery's
    settings)."""
    context_messages: int = 1
    """The conversation's last texts shown before the message (a reply such as "yes
    please" asks for a tool only after "shall I save it?")."""
    options: dict[str, JsonValue] = Field(default_factory=dict)


class ConversationGateOutput(BaseModel):
    conversation: bool
    """The model answered ``none``: the message's turns go without tools."""
    answer: str = ""
    """The model's answer, cut at 200 characters (for the trace)."""
    routed_tool: str | None = None
    """The offered tool the answer named; None for ``none``, an unreadable answer, and
    results recorded before the field existed (``call_requested_tool`` asks for it only
    when this is set, so those histories replay as recorded)."""
    latency_ms: int = 0
    usage: Usage = Usage()


def gate_tools(specs: list[ToolSpec]) -> list[GateTool]:
    return [
        GateTool(name=s.name, summary=(s.description or "").strip().split("\n")[0][:SUMMARY_CHARS])
        for s in specs
    ]


def gate_schema(names: list[str]) -> dict[str, JsonValue]:
    return {
        "type": "object",
        "properties": {"tool": {"enum": [*names, NONE]}},
        "required": ["tool"],
        "additionalProperties": False,
    }


def gate_messages(
    question: str,
    tools: list[GateTool],
    examples: list[str],
    context: list[tuple[str, str]],
) -> list[Message]:
    listing = "\n".join(f"- {t.name}: {t.summary}" if t.summary else f"- {t.name}" for t in tools)
    shots = [
        m
        for text in examples
        for m in (Message.user(text), Message(role="assistant", content=json.dumps({"tool": NONE})))
    ]
    shown = [(role, text[:CONTEXT_CHARS]) for role, text in context]
    return [
        Message.system(SYSTEM.format(listing=listing)),
        *shots,
        Message.user(with_context(question, shown)),
    ]


def gate_options(
    endpoint: LlmEndpoint, request_overrides: dict[str, JsonValue], names: list[str]
) -> dict[str, JsonValue]:
    """The session's sampling and overrides, a short reply, and the answer constrained to
    the gate's JSON where the provider constrains a reply without tools."""
    options: dict[str, JsonValue] = {**endpoint.llm_options, **request_overrides}
    schema = gate_schema(names)
    if endpoint.provider == "gemini":
        generation = options.get("generationConfig")
        options["generationConfig"] = {
            **(generation if isinstance(generation, dict) else {}),
            "responseMimeType": "application/json",
            "responseJsonSchema": schema,
            "maxOutputTokens": MAX_TOKENS,
        }
        return options
    key = "max_completion_tokens" if "max_completion_tokens" in options else "max_tokens"
    options[key] = MAX_TOKENS
    mode = output_mode(endpoint.provider, endpoint.structured_output, has_tools=False)
    if mode == "native":
        options["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": True},
        }
    return options


def gate_choice(text: str) -> str | None:
    """The ``tool`` of the gate's JSON answer (fenced or not); None when unreadable."""
    try:
        value = json.loads(text.strip().removeprefix("```json").strip("`").strip())
    except ValueError:
        return None
    choice = value.get("tool") if isinstance(value, dict) else None
    return choice if isinstance(choice, str) else None


def routed_tool(text: str, names: list[str]) -> str | None:
    """The offered tool a readable answer names, else None."""
    choice = gate_choice(text)
    return choice if choice in names else None


def is_conversation(text: str, names: list[str]) -> bool:
    """True only for a readable ``{"tool": "none"}``; anything else keeps the tools."""
    return gate_choice(text) == NONE and NONE not in names
