"""Prompts of the router -> executor -> summarizer pipeline, as canonical messages.

The router sees tool *names* only; the executor sees one tool's schema; the summarizer
sees the question and one tool result and has no tools. Each prompt stays small enough
for a model with a few thousand tokens of context.
"""

from __future__ import annotations

import json

from durable_loop.core.messages import Message
from durable_loop.core.tools import ToolSpec

ROUTER_SYSTEM = """\
You are a router. You decide how the user's latest message is handled; you never answer it.
Output ONLY one JSON object, with no prose and no markdown:
{{"choice": "call_tool" | "clarify" | "none", "tool": <name or null>, "question": <text or null>}}

Tools: {names}

Rules:
- call_tool: one of the tools looks up or does what the message asks.
  "tool" is its exact name; "question" is null.
- none: general knowledge, explanations, advice, opinions, chit-chat, or anything no tool
  serves. "tool" and "question" are null.
- clarify: ONLY when the message clearly asks for a lookup but the identifier that tool needs
  (a number, an id, a name) is missing. "tool" is that tool; "question" asks for the
  identifier in one short sentence.
- Several requests in one message: route the first one a tool can serve.
- Tolerate typos and nicknames. Never invent a tool name."""

EXECUTOR_SYSTEM = """\
You fill in the arguments of one tool call.
Output ONLY one JSON object, with no prose and no markdown:
{{"tool": "{name}", "args": {{...}}}}

Tool: {name}
Description: {description}
Arguments (JSON Schema): {schema}

Rules:
- "args" must validate against the schema: exact property names, correct types, allowed
  values only.
- Take values from the user's message. Turn nicknames, abbreviations and typos into the
  canonical value.
- Leave out optional arguments the message does not give."""

REPAIR = (
    "That output was rejected: {error}\n"
    "Reply again with ONLY the corrected JSON object, no prose, no markdown."
)

SUMMARIZER_SYSTEM = (
    "Answer the user's question using only the tool result you are given. Be brief and "
    "plain. If the result is an error, say what went wrong. Do not output JSON."
)

ANSWER_SYSTEM = "Answer the user's message directly and briefly."


LATEST_MESSAGE = "Latest message: "


def with_context(question: str, context: list[tuple[str, str]]) -> str:
    """The message with the conversation's last texts before it, as (role, text) pairs."""
    if not context:
        return question
    lines = "\n".join(f"{role}: {text}" for role, text in context)
    return f"Conversation so far:\n{lines}\n\n{LATEST_MESSAGE}{question}"


def router_messages(
    question: str, tool_names: list[str], context: list[tuple[str, str]]
) -> list[Message]:
    names = ", ".join(tool_names) if tool_names else "(none)"
    return [
        Message.system(ROUTER_SYSTEM.format(names=names)),
        Message.user(with_context(question, context)),
    ]


def executor_messages(
    question: str, spec: ToolSpec, context: list[tuple[str, str]]
) -> list[Message]:
    schema = json.dumps(spec.parameters, separators=(",", ":"), ensure_ascii=False)
    system = EXECUTOR_SYSTEM.format(
        name=spec.name, description=spec.description or "(none)", schema=schema
    )
    return [Message.system(system), Message.user(with_context(question, context))]


def with_repair(messages: list[Message], bad_output: str, error: str) -> list[Message]:
    return [
        *messages,
        Message(role="assistant", content=bad_output),
        Message.user(REPAIR.format(error=error)),
    ]


def summarizer_messages(question: str, tool_name: str, tool_output: str) -> list[Message]:
    return [
        Message.system(SUMMARIZER_SYSTEM),
        Message.user(f"Question: {question}\n\nResult of {tool_name}:\n{tool_output}"),
    ]


def answer_messages(question: str, context: list[tuple[str, str]]) -> list[Message]:
    return [Message.system(ANSWER_SYSTEM), Message.user(with_context(question, context))]
