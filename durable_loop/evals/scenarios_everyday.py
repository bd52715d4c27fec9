"""Everyday scenarios: ordinary requests to the calculator and the notebook, as a new user
writes them. Each passes only when the message completes with a reply in natural language
that holds the right value: a tool call written as text, JSON or an empty reply fails.

Selected with ``--scenarios everyday`` (or by name); outside ``all``, like the gated ones.
"""

from __future__ import annotations

import re

from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_check import text_call_of
from durable_loop.evals.scenario import Action, Check, ModelView, Policy, Scenario, Trace
from durable_loop.tools.everyday import Notebook, demo_registry

TOOLS = ("calculate", "note_add", "note_list")
NOTE = "buy milk"


def everyday_tools() -> ToolRegistry:
    return demo_registry(Notebook())


def _plain(text: str) -> str:
    """Digits without thousands separators, so "1,048,576" holds 1048576."""
    return re.sub(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)", "", text)


def answered(trace: Trace, *values: str, any_of: tuple[str, ...] = ()) -> list[str]:
    """The message completed with a natural-language reply holding every value (and one
    of ``any_of``), not a tool call written as text and not JSON or code."""
    reply = (trace.reply or "").strip()
    if trace.status != "completed":
        return [f"status {trace.status} ({trace.error_code})"]
    if not reply:
        return ["the reply is empty"]
    if text_call_of(reply, set(TOOLS)) is not None:
        return [f"the reply is a tool call written as text: {reply[:80]!r}"]
    if reply[0] in "{[" or "```" in reply:
        return [f"the reply is JSON or code, not a sentence: {reply[:80]!r}"]
    plain = _plain(reply).lower()
    problems = [f"the reply {reply[:80]!r} does not hold {v!r}" for v in values if v not in plain]
    if any_of and not any(word in plain for word in any_of):
        problems.append(f"the reply {reply[:80]!r} holds none of {list(any_of)}")
    return problems


def _calls(trace: Trace, name: str, *, at_least: int = 1) -> list[str]:
    made = trace.ok_calls(name)
    return [] if made >= at_least else [f"{made} successful {name} call(s), {at_least} needed"]


def _steps(*steps: Action, final: str) -> Policy:
    """A policy that makes the calls in order: one step per distinct successful call (a
    repeated call, answered from the recorded result, is no new step)."""

    def policy(view: ModelView) -> Action:
        done = len({(r.name, r.arguments) for r in view.results if r.ok})
        if view.tools_sent and done < len(steps):
            return steps[done]
        return Action.final(final)

    return policy


def _scenario(
    name: str, prompt: str, policy: Policy, check: Check, about: str, *, uses_tools: bool = True
) -> Scenario:
    return Scenario(
        name=name,
        prompt=prompt,
        policy=policy,
        check=check,
        uses_tools=uses_tools,
        runtime={"tool_allowlist": list(TOOLS)},
        extra_tools=everyday_tools,
        description=about,
    )


ARITHMETIC = _scenario(
    "everyday_arithmetic",
    "Compute 37 times 43 and tell me the result.",
    _steps(Action.call("calculate", {"expression": "37 * 43"}), final="37 times 43 is 1591."),
    lambda t: [*_calls(t, "calculate"), *answered(t, "1591")],
    "one calculation, answered in a sentence",
)

TWO_STEP = _scenario(
    "everyday_two_step",
    "Add 17 and 25, then multiply the sum by 3. What do you get?",
    _steps(
        Action.call("calculate", {"expression": "17 + 25"}),
        Action.call("calculate", {"expression": "42 * 3"}),
        final="17 + 25 is 42, and 42 times 3 is 126.",
    ),
    lambda t: [*_calls(t, "calculate"), *answered(t, "126")],
    "two dependent calculations (one expression also passes)",
)

SAVE_THEN_LIST = _scenario(
    "everyday_save_then_list",
    f'Save a note saying "{NOTE}", then tell me how many notes I have saved.',
    _steps(
        Action.call("note_add", {"text": NOTE}),
        Action.call("note_list", {}),
        final=f'You have 1 note saved: "{NOTE}".',
    ),
    lambda t: [
        *_calls(t, "note_add"),
        *_calls(t, "note_list"),
        *answered(t, any_of=("1 note", "one note")),
    ],
    "a write, then a read whose result is the answer",
)


def _fixable(view: ModelView) -> Action:
    if view.ok("calculate") or not view.tools_sent:
        return Action.final("2 to the power of 20 is 1048576.")
    if view.failed_with(ErrorCode.INVALID_ARGS):
        return Action.call("calculate", {"expression": "2 ** 20"})
    return Action.call("calculate", {"expression": "2^20"})


FIXABLE_ERROR = _scenario(
    "everyday_fixable_error",
    "What is 2^20?",
    _fixable,
    lambda t: [*_calls(t, "calculate"), *answered(t, "1048576")],
    "the first expression is refused (INVALID_ARGS: ^ is not arithmetic); ** works",
)


def _impossible(view: ModelView) -> Action:
    if view.results or not view.tools_sent:
        return Action.final("That cannot be computed: division by zero is undefined.")
    return Action.call("calculate", {"expression": "10 / 0"})


IMPOSSIBLE = _scenario(
    "everyday_impossible",
    "Divide 10 by 0 and tell me the result.",
    _impossible,
    lambda t: answered(t, any_of=("undefined", "cannot", "can't", "not possible", "impossible")),
    "no value exists (division by zero): the reply says so in a sentence",
    uses_tools=False,
)

CHIT_CHAT = _scenario(
    "everyday_chit_chat",
    "Hi! Just saying hello, how are you today?",
    lambda view: Action.final("Hello! I'm doing well, thank you. How can I help you today?"),
    lambda t: [
        *(["a tool was called for chit-chat"] if t.tool_calls else []),
        *answered(t, any_of=("hello", "hi", "hey", "well", "good", "help")),
    ],
    "no tool is needed; a friendly sentence",
    uses_tools=False,
)

QUOTE_RESULT = _scenario(
    "everyday_quote_result",
    "Use the calculator to work out 123 * 456 and quote the exact number it returned.",
    _steps(Action.call("calculate", {"expression": "123 * 456"}), final="It returned 56088."),
    lambda t: [*_calls(t, "calculate"), *answered(t, "56088")],
    "the answer must quote the tool's result",
)

EVERYDAY = (
    ARITHMETIC,
    TWO_STEP,
    SAVE_THEN_LIST,
    FIXABLE_ERROR,
    IMPOSSIBLE,
    CHIT_CHAT,
    QUOTE_RESULT,
)
