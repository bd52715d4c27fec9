"""Recovery scenarios: the failure modes of DESIGN.md, each followed by a correct call."""

from __future__ import annotations

from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolFailure, ToolRegistry
from durable_loop.evals.scenario import (
    FINAL_RULE,
    Action,
    ModelView,
    Scenario,
    Trace,
    called_ok,
    draft_has,
    finished,
)

TAG = "urgent"


def _tag_patch() -> dict[str, object]:
    return {"ops": [{"op": "add", "path": "/tag", "value": TAG}]}


def _unknown_tool(view: ModelView) -> Action:
    if view.ok("state_patch") or not view.tools_sent:
        return Action.final()
    if view.failed_with(ErrorCode.TOOL_NOT_FOUND):
        return Action.call("state_patch", _tag_patch())
    return Action.call("state_set", {"path": "/tag", "value": TAG})


def _check_tag(trace: Trace) -> list[str]:
    return [
        *finished(trace),
        *called_ok(trace, "state_patch"),
        *draft_has(trace, "tag", lambda v: v == TAG),
    ]


UNKNOWN_TOOL_RECOVERY = Scenario(
    name="unknown_tool_recovery",
    prompt=f'Set /tag to "{TAG}" in the draft. Try the tool state_set first; if it does not '
    "exist, use the tool that does (state_patch). " + FINAL_RULE,
    policy=_unknown_tool,
    check=_check_tag,
    description="a call to a tool that does not exist gets TOOL_NOT_FOUND; the model switches",
)


def _invalid_json(view: ModelView) -> Action:
    if view.ok("state_patch") or not view.tools_sent:
        return Action.final()
    if view.failed_with(ErrorCode.INVALID_JSON):
        return Action.call("state_patch", _tag_patch())
    return Action.call("state_patch", '{"ops": [{"op": "add", "path": "/tag", "value": "urg')


INVALID_JSON_RECOVERY = Scenario(
    name="invalid_json_recovery",
    prompt=f'Set /tag to "{TAG}" in the draft with state_patch. If the tool says your '
    "arguments were not valid JSON, send them again as valid JSON. " + FINAL_RULE,
    policy=_invalid_json,
    check=_check_tag,
    description="truncated JSON arguments get INVALID_JSON; the model resends them",
)


def _empty_final(view: ModelView) -> Action:
    if not view.ok("state_get") and view.tools_sent:
        return Action.call("state_get", {"target": "draft"})
    # the scripted model's quirk: an empty final until the loop asks again
    return Action.final("" if view.last_role == "tool" else "Done.")


EMPTY_FINAL_RECOVERY = Scenario(
    name="empty_final_recovery",
    prompt="Read the draft with state_get. " + FINAL_RULE,
    policy=_empty_final,
    check=lambda t: [*finished(t), *called_ok(t, "state_get")],
    description="the first final after a tool result is empty; the loop asks once more",
)

NOTE_NAMES = {"notes/today": "Buy milk."}


def note_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def read_note(name: str) -> str:
        """Read a saved note by its full name, e.g. notes/today."""
        if name not in NOTE_NAMES:
            raise ToolFailure(
                ErrorCode.TOOL_ERROR,
                f"note {name!r} not found; saved notes: {', '.join(sorted(NOTE_NAMES))}",
            )
        return NOTE_NAMES[name]

    return registry


def _tool_error(view: ModelView) -> Action:
    if view.ok("read_note") or not view.tools_sent:
        return Action.final()
    name = "notes/today" if view.failed_with(ErrorCode.TOOL_ERROR) else "today"
    return Action.call("read_note", {"name": name})


TOOL_ERROR_RECOVERY = Scenario(
    name="tool_error_recovery",
    prompt='Read my note called "today" with read_note. If the tool reports an error, use '
    "what the error says to call it again correctly. " + FINAL_RULE,
    policy=_tool_error,
    check=lambda t: [*finished(t), *called_ok(t, "read_note")],
    extra_tools=note_tools,
    description="the tool fails with a helpful TOOL_ERROR; the model corrects the call",
)

RECOVERY = (
    UNKNOWN_TOOL_RECOVERY,
    INVALID_JSON_RECOVERY,
    EMPTY_FINAL_RECOVERY,
    TOOL_ERROR_RECOVERY,
)
