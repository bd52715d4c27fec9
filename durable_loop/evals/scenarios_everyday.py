"""Everyday scenarios: ordinary requests to the calculator and the notebook, as a new user
writes them. Each passes only when the message completes with a reply in natural language
that holds the right value: a tool call written as text, JSON or an empty reply fails.

Selected with ``--scenarios everyday`` (or by name); outside ``all``, like the gated ones.
"""

from __future__ import annotations

from durable_loop.core.errors import ErrorCode
from durable_loop.evals.everyday_kit import answered, calls_made, everyday_scenario, steps
from durable_loop.evals.scenario import Action, ModelView
from durable_loop.evals.scenarios_everyday_requests import REQUESTS

NOTE = "buy milk"


ARITHMETIC = everyday_scenario(
    "everyday_arithmetic",
    "Compute 37 times 43 and tell me the result.",
    steps(Action.call("calculate", {"expression": "37 * 43"}), final="37 times 43 is 1591."),
    lambda t: [*calls_made(t, "calculate"), *answered(t, "1591")],
    "one calculation, answered in a sentence",
)

TWO_STEP = everyday_scenario(
    "everyday_two_step",
    "Add 17 and 25, then multiply the sum by 3. What do you get?",
    steps(
        Action.call("calculate", {"expression": "17 + 25"}),
        Action.call("calculate", {"expression": "42 * 3"}),
        final="17 + 25 is 42, and 42 times 3 is 126.",
    ),
    lambda t: [*calls_made(t, "calculate"), *answered(t, "126")],
    "two dependent calculations (one expression also passes)",
)

SAVE_THEN_LIST = everyday_scenario(
    "everyday_save_then_list",
    f'Save a note saying "{NOTE}", then tell me how many notes I have saved.',
    steps(
        Action.call("note_add", {"text": NOTE}),
        Action.call("note_list", {}),
        final=f'You have 1 note saved: "{NOTE}".',
    ),
    lambda t: [
        *calls_made(t, "note_add"),
        *calls_made(t, "note_list"),
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


FIXABLE_ERROR = everyday_scenario(
    "everyday_fixable_error",
    "What is 2^20?",
    _fixable,
    lambda t: [*calls_made(t, "calculate"), *answered(t, "1048576")],
    "the first expression is refused (INVALID_ARGS: ^ is not arithmetic); ** works",
)


def _impossible(view: ModelView) -> Action:
    if view.results or not view.tools_sent:
        return Action.final("That cannot be computed: division by zero is undefined.")
    return Action.call("calculate", {"expression": "10 / 0"})


IMPOSSIBLE = everyday_scenario(
    "everyday_impossible",
    "Divide 10 by 0 and tell me the result.",
    _impossible,
    lambda t: answered(t, any_of=("undefined", "cannot", "can't", "not possible", "impossible")),
    "no value exists (division by zero): the reply says so in a sentence",
    uses_tools=False,
)

CHIT_CHAT = everyday_scenario(
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

QUOTE_RESULT = everyday_scenario(
    "everyday_quote_result",
    "Use the calculator to work out 123 * 456 and quote the exact number it returned.",
    steps(Action.call("calculate", {"expression": "123 * 456"}), final="It returned 56088."),
    lambda t: [*calls_made(t, "calculate"), *answered(t, "56088")],
    "the answer must quote the tool's result",
)

BASICS = (
    ARITHMETIC,
    TWO_STEP,
    SAVE_THEN_LIST,
    FIXABLE_ERROR,
    IMPOSSIBLE,
    CHIT_CHAT,
    QUOTE_RESULT,
)
EVERYDAY = (*BASICS, *REQUESTS)
