"""The core scenarios: the workspace tools used right, and the chat-only control."""

from __future__ import annotations

from durable_loop.core.errors import ErrorCode
from durable_loop.evals.scenario import (
    DONE,
    FINAL_RULE,
    Action,
    Call,
    ModelView,
    Scenario,
    Trace,
    called_ok,
    draft_has,
    finished,
)

TITLE = "Hello world"
SHORT_NOTE = "Short summary."
LONG_NOTE = "lorem ipsum " * 60


def _set_title(view: ModelView) -> Action:
    if view.ok("state_patch") or not view.tools_sent:
        return Action.final()
    return Action.call("state_patch", {"ops": [{"op": "add", "path": "/title", "value": TITLE}]})


def _check_title(trace: Trace) -> list[str]:
    return [
        *finished(trace),
        *called_ok(trace, "state_patch"),
        *draft_has(trace, "title", lambda v: v == TITLE),
    ]


HAPPY_PATH = Scenario(
    name="happy_path",
    prompt=f'Set the draft\'s title to "{TITLE}" with the state_patch tool (path /title). '
    + FINAL_RULE,
    policy=_set_title,
    check=_check_title,
    description="one correct state_patch call, then the fixed final reply",
)


def _read_state(view: ModelView) -> Action:
    if view.ok("state_get") or not view.tools_sent:
        return Action.final()
    return Action.call("state_get", {"target": "draft"})


MISSING_WORKSPACE_ID = Scenario(
    name="missing_workspace_id",
    prompt="Read the current draft of my workspace with the state_get tool. You do not know "
    "the workspace id and do not need it. " + FINAL_RULE,
    policy=_read_state,
    check=lambda t: [*finished(t), *called_ok(t, "state_get")],
    description="the workspace is implicit: the call must work without an id",
)


def _type_error(view: ModelView) -> Action:
    if view.ok("state_patch") or not view.tools_sent:
        return Action.final()
    if view.failed_with(ErrorCode.INVALID_ARGS):
        return Action.call("state_patch", {"ops": [{"op": "add", "path": "/count", "value": 3}]})
    return Action.call(
        "state_patch", {"ops": [{"op": "add", "path": "/count", "value": 3}], "base_version": "x"}
    )


TYPE_ERROR_RECOVERY = Scenario(
    name="type_error_recovery",
    prompt="Add /count = 3 to the draft with state_patch. Pass base_version as the string "
    '"latest" on your first try; if the tool reports INVALID_ARGS, fix the arguments and call '
    "it again. " + FINAL_RULE,
    policy=_type_error,
    check=lambda t: [
        *finished(t),
        *called_ok(t, "state_patch"),
        *draft_has(t, "count", lambda v: v == 3),
    ],
    description="a wrongly typed argument is refused; the model fixes it and retries",
)


def _long_args(view: ModelView) -> Action:
    if view.ok("state_patch") or not view.tools_sent:
        return Action.final()
    note = SHORT_NOTE if view.failed_with(ErrorCode.ARGUMENTS_TOO_LARGE) else LONG_NOTE
    return Action.call("state_patch", {"ops": [{"op": "add", "path": "/note", "value": note}]})


LONG_ARGUMENTS_GUARD = Scenario(
    name="long_arguments_guard",
    prompt="Save a note at /note in the draft with state_patch: first try the full text "
    f'"{LONG_NOTE.strip()}". If the tool reports ARGUMENTS_TOO_LARGE, shorten the note to '
    "one short sentence (under 100 characters) and call state_patch again. " + FINAL_RULE,
    policy=_long_args,
    check=lambda t: [
        *finished(t),
        *called_ok(t, "state_patch"),
        *draft_has(t, "note", lambda v: isinstance(v, str) and 0 < len(v) < 200),
    ],
    runtime={"max_tool_args_bytes": 400},
    description="oversized arguments are refused; the model must shorten and retry",
)

CHAT_ONLY = Scenario(
    name="chat_only",
    prompt=f'Do not use any tool. Reply with exactly "{DONE}" and nothing else.',
    policy=lambda view: Action.final(),
    check=lambda t: [
        *finished(t),
        *([f"{len(t.tool_calls)} tool calls in a chat-only run"] if t.tool_calls else []),
    ],
    uses_tools=False,
    description="control: no tools needed (tools are still offered)",
)


def _parallel(view: ModelView) -> Action:
    if (view.ok("state_patch") and view.ok("state_get")) or not view.tools_sent:
        return Action.final()
    patch = Call("state_patch", {"ops": [{"op": "add", "path": "/title", "value": TITLE}]})
    read = Call("state_get", {"target": "facts"})
    missing = tuple(c for c in (patch, read) if not view.ok(c.name))
    return Action(calls=missing)


HAPPY_PATH_PARALLEL = Scenario(
    name="happy_path_parallel",
    prompt=f'Do two things: set the draft\'s title to "{TITLE}" with state_patch, and read the '
    "facts with state_get (you may call both tools at once). " + FINAL_RULE,
    policy=_parallel,
    check=lambda t: [*_check_title(t), *called_ok(t, "state_get")],
    description="two independent tool calls, in one reply or one after the other",
)

CORE = (
    HAPPY_PATH,
    MISSING_WORKSPACE_ID,
    TYPE_ERROR_RECOVERY,
    LONG_ARGUMENTS_GUARD,
    CHAT_ONLY,
    HAPPY_PATH_PARALLEL,
)
