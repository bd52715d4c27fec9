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
{{"choice": "none" | "clarify" | "call_tool", "tool": <name or null>, "question": <text or null>}}

Tools, as name(required arguments): what it does
{tools}

Decide with two questions:
A. Does the message ask for what one of the tools looks up or does, even indirectly (a
   question whose answer depends on that tool's result)? If not: general knowledge,
   explanations, how or why something works, advice, opinions, writing, greetings, thanks:
   {{"choice": "none", "tool": null, "question": null}}
B. If it does: does the message (or the conversation) give every required argument of
   that tool? Typos, nicknames and abbreviations count as given.
   Yes: {{"choice": "call_tool", "tool": "<tool name>", "question": null}}
   No, e.g. "my order" with no order number: never guess a value, ask for it in one short
   sentence: {{"choice": "clarify", "tool": "<tool name>", "question": "<the question>"}}
Several requests in one message: route the first one a tool can serve.
Use only the tool names listed above.

{examples}"""

ROUTER_EXAMPLES_TOOLS = "order_status(order_id), stock_price(symbol), translate(text, language)"
"""Few-shot examples over tools the router never sees, so they teach the rules (none for
knowledge questions on a tool's topic, clarify for a missing identifier) without handing
the model answers for the real tools' requests."""
ROUTER_EXAMPLES: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("Where is order 5512-889?", "call_tool", "order_status", None),
    ("Has my order shipped yet?", "clarify", "order_status", "What is your order number?"),
    ("How long does shipping usually take?", "none", None, None),
    ("whats apple tradin at", "call_tool", "stock_price", None),
    ("Is Tesla up today?", "call_tool", "stock_price", None),
    ("Why do stock prices fall after a bad report?", "none", None, None),
    ("Translate 'good night' into Italian", "call_tool", "translate", None),
    ("Translate my message", "clarify", "translate", "Which text, and into which language?"),
    ("thank you, bye!", "none", None, None),
)

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


def _with_context(question: str, context: list[tuple[str, str]]) -> str:
    if not context:
        return question
    lines = "\n".join(f"{role}: {text}" for role, text in context)
    return f"Conversation so far:\n{lines}\n\nLatest message: {question}"


def tool_line(spec: ToolSpec) -> str:
    """``name(required, arguments): first line of the description``: what the router needs
    to tell a missing identifier (clarify) from a complete request (call_tool)."""
    raw = spec.parameters.get("required")
    required = [str(r) for r in raw] if isinstance(raw, list) else []
    summary = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
    line = f"- {spec.name}({', '.join(required)})"
    return f"{line}: {summary}" if summary else line


def router_examples() -> str:
    lines = [f"Examples with other tools ({ROUTER_EXAMPLES_TOOLS}):"]
    for message, choice, tool, question in ROUTER_EXAMPLES:
        decision = json.dumps({"choice": choice, "tool": tool, "question": question})
        lines.append(f"{json.dumps(message)} -> {decision}")
    return "\n".join(lines)


def router_messages(
    question: str, tools: list[ToolSpec], context: list[tuple[str, str]]
) -> list[Message]:
    listed = "\n".join(tool_line(spec) for spec in tools) if tools else "(none)"
    system = ROUTER_SYSTEM.format(tools=listed, examples=router_examples())
    return [Message.system(system), Message.user(_with_context(question, context))]


def executor_messages(
    question: str, spec: ToolSpec, context: list[tuple[str, str]]
) -> list[Message]:
    schema = json.dumps(spec.parameters, separators=(",", ":"), ensure_ascii=False)
    system = EXECUTOR_SYSTEM.format(
        name=spec.name, description=spec.description or "(none)", schema=schema
    )
    return [Message.system(system), Message.user(_with_context(question, context))]


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
    return [Message.system(ANSWER_SYSTEM), Message.user(_with_context(question, context))]
