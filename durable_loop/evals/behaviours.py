"""Scripted model behaviours for offline evals: each turns a scenario's ideal trajectory
into OpenAI-compatible replies with one realistic quirk, served by :class:`ScriptedLLM`.

``fixed_by`` names the transform, preset or recovery (core/recoveries) that should turn
the behaviour's failures into passes, ``broken_under`` the runtime update under which it
fails (see docs/evals.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import JsonValue

from durable_loop.cli.errors import CliError
from durable_loop.core import presets
from durable_loop.core.errors import ErrorCode
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.recovery_requests import args_text, gate_reply, repair_reply
from durable_loop.evals.scenario import (
    DONE,
    Action,
    Call,
    ModelView,
    Scenario,
    view_of,
)
from durable_loop.testing import reply
from durable_loop.testing.scripted import RecordedRequest, Reply

Update = dict[str, JsonValue]


def _wire(action: Action, turn: int, *, as_objects: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{turn}_{i}",
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": c.arguments
                if as_objects and isinstance(c.arguments, dict)
                else args_text(c),
            },
        }
        for i, c in enumerate(action.calls)
    ]


def _completion(message: dict[str, Any], finish: str) -> Reply:
    return Reply(
        body={
            "id": "chatcmpl-eval",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
        }
    )


Render = Callable[[Action, int], Reply]


def render_standard(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    return _completion(
        {"role": "assistant", "content": None, "tool_calls": _wire(action, turn)}, "tool_calls"
    )


def render_tags(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    text = "\n".join(
        "<tool_call>" + json.dumps({"name": c.name, "arguments": c.arguments}) + "</tool_call>"
        for c in action.calls
    )
    return reply.text(text)


def render_bare_json(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    c = action.calls[0]
    return reply.text(
        "```json\n" + json.dumps({"name": c.name, "arguments": c.arguments}) + "\n```"
    )


def render_objects(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    wire = _wire(action, turn, as_objects=True)
    return _completion({"role": "assistant", "content": None, "tool_calls": wire}, "tool_calls")


def render_calls_object(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    wire = _wire(action, turn)[0]
    return _completion({"role": "assistant", "content": None, "tool_calls": wire}, "tool_calls")


def render_function_call(action: Action, turn: int) -> Reply:
    if not action.calls:
        return reply.text(action.text)
    c = action.calls[0]
    message = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": c.name, "arguments": args_text(c)},
    }
    return _completion(message, "function_call")


Twist = Callable[[Scenario, ModelView, Action], Action]


def no_twist(scenario: Scenario, view: ModelView, action: Action) -> Action:
    return action


def empty_finals(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """An empty final right after tool results, until asked again."""
    if not action.calls and view.last_role == "tool":
        return Action.final("")
    return action


def ignores_size_errors(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Resends the same oversized arguments after ARGUMENTS_TOO_LARGE."""
    last = view.last
    if view.tools_sent and last is not None and ErrorCode.ARGUMENTS_TOO_LARGE in last.codes:
        return Action.call(last.name, json.loads(last.arguments))
    return action


def repeats_after_result(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Calls the same tool again after a successful result while tools are still sent
    (what the local Qwen2.5-Coder models do)."""
    last = view.last
    if view.tools_sent and view.last_role == "tool" and last is not None and last.ok:
        return Action.call(last.name, json.loads(last.arguments))
    return action


PLACEHOLDER_ID = "your_workspace_id"


def fills_placeholder_ids(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Fills an offered optional ``workspace_id`` with a made-up placeholder."""
    calls = []
    for call in action.calls:
        offered = "workspace_id" in view.offered.get(call.name, frozenset())
        if offered and isinstance(call.arguments, dict):
            call = Call(call.name, {**call.arguments, "workspace_id": PLACEHOLDER_ID})
        calls.append(call)
    return Action(calls=tuple(calls), text=action.text) if calls else action


def gives_up_after_errors(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Reads a failed tool result and declares the task done anyway."""
    last = view.last
    if view.last_role == "tool" and last is not None and not last.ok:
        return Action.final()
    return action


def invalid_json_first(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Asked for a typed answer, answers in prose first; sends the JSON once the loop
    returns the validation errors."""
    corrected = "output schema" in view.last_user
    if view.json_asked and not action.calls and not corrected:
        return Action.final(f"Sure! Here it is: {action.text}")
    return action


def repeats_then_writes_the_call(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Repeats a call after its result while tools are sent; once tools are withdrawn it
    writes that call as JSON text instead of answering (the local Qwen in issue 18)."""
    last = view.last
    if view.last_role != "tool" or last is None or not last.ok:
        return action
    if view.tools_sent:
        return Action.call(last.name, json.loads(last.arguments))
    if not action.calls:
        return Action.final(json.dumps({"name": last.name, "arguments": last.arguments}))
    return action


def names_the_tool(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Answers the person's request by telling them which function to use, instead of
    calling it (``you can use the `note_list` function``)."""
    if action.calls and not view.results and view.last_user == scenario.prompt:
        return Action.final(
            f"To do that, you can use the `{action.calls[0].name}` function with the right "
            "arguments."
        )
    return action


def stops_after_first_call(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Makes one call per reply and answers "Done." right after a successful call while the
    request still needs a call of another tool (the local Qwen2.5-Coder on
    happy_path_parallel: the state_patch, never the state_get)."""
    if (
        action.calls
        and view.last_role == "tool"
        and any(r.ok for r in view.results)
        and not any(view.ok(c.name) for c in action.calls)
    ):
        return Action.final(DONE)
    return replace(action, calls=action.calls[:1]) if len(action.calls) > 1 else action


REFUSAL = "I'm sorry, but I can't assist with that."


def refuses_after_invalid_args(scenario: Scenario, view: ModelView, action: Action) -> Action:
    """Reads an INVALID_ARGS result and refuses the task instead of fixing the call."""
    last = view.last
    if view.last_role == "tool" and last is not None and ErrorCode.INVALID_ARGS in last.codes:
        return Action.final(REFUSAL)
    return action


@dataclass(frozen=True)
class Behaviour:
    name: str
    render: Render = render_standard
    twist: Twist = no_twist
    fixed_by: str = ""
    fix: Update = field(default_factory=dict)
    broken_under: Update = field(default_factory=dict)
    description: str = ""

    def step(self, scenario: Scenario) -> Callable[[RecordedRequest], Reply]:
        def answer(request: RecordedRequest) -> Reply:
            special = repair_reply(scenario, request) or gate_reply(scenario, request)
            if special is not None:
                return special
            messages = request.messages
            tools = request.body.get("tools")
            view = view_of(messages, tools_sent=bool(tools), tools=tools)
            view = replace(view, json_asked="response_format" in request.body)
            action = self.twist(scenario, view, scenario.policy(view))
            turn = sum(1 for m in messages if m.get("role") == "assistant")
            return self.render(action, turn)

        return answer


STRICT: Update = {"transforms": {"provider_normalization": False}}


def _response(name: str) -> Update:
    """Strict shapes plus one repairing transform: shows that transform alone fixes it."""
    return {"transforms": {"provider_normalization": False, "response_transforms": [name]}}


BEHAVIOURS: dict[str, Behaviour] = {
    b.name: b
    for b in (
        Behaviour("well_behaved", description="native tool calls, JSON-string arguments"),
        Behaviour(
            "tags_as_text",
            render=render_tags,
            fixed_by="content_tag_tool_call_fallback",
            fix=presets.content_tag_tool_call_fallback(),
            description="writes <tool_call>{...}</tool_call> as text",
        ),
        Behaviour(
            "json_as_text",
            render=render_bare_json,
            fixed_by="json_tool_call_fallback",
            fix=presets.json_tool_call_fallback(),
            description="writes a fenced JSON call as text (like local Qwen2.5-Coder)",
        ),
        Behaviour(
            "args_as_objects",
            render=render_objects,
            fixed_by="assistant_tool_calls_arguments_json_string_if_hash",
            fix=_response("assistant_tool_calls_arguments_json_string_if_hash"),
            broken_under=STRICT,
            description="arguments as a JSON object instead of a string",
        ),
        Behaviour(
            "tool_calls_as_object",
            render=render_calls_object,
            fixed_by="assistant_tool_calls_object_to_array",
            fix=_response("assistant_tool_calls_object_to_array"),
            broken_under=STRICT,
            description="tool_calls as one object instead of an array",
        ),
        Behaviour(
            "legacy_function_call",
            render=render_function_call,
            fixed_by="assistant_function_call_to_tool_calls",
            fix=_response("assistant_function_call_to_tool_calls"),
            broken_under=STRICT,
            description="the deprecated function_call field instead of tool_calls",
        ),
        Behaviour(
            "empty_finals",
            twist=empty_finals,
            fixed_by="fix_empty_final",
            fix=presets.recoveries("fix_empty_final"),
            broken_under=presets.without_recoveries("fix_empty_final"),
            description="an empty final reply after tool results",
        ),
        Behaviour(
            "repeats_after_result",
            twist=repeats_after_result,
            fixed_by="repeated_call_guard",
            fix=presets.recoveries("repeated_call_guard"),
            broken_under={**presets.without_recoveries("repeated_call_guard"), "max_turns": 6},
            description="calls the same tool again after its result while tools are sent",
        ),
        Behaviour(
            "fills_placeholder_ids",
            twist=fills_placeholder_ids,
            fixed_by="hide_implicit_arguments",
            fix=presets.hide_implicit_arguments(),
            description='fills an offered optional id with "your_workspace_id" '
            "(like local Qwen2.5-Coder)",
        ),
        Behaviour(
            "gives_up_after_errors",
            twist=gives_up_after_errors,
            fixed_by="retry_after_tool_error",
            fix=presets.recoveries("retry_after_tool_error"),
            description="answers as if done right after a failed call (like local Qwen2.5-Coder)",
        ),
        Behaviour(
            "invalid_json_first",
            twist=invalid_json_first,
            fixed_by="correct_typed_answer",
            fix=presets.recoveries("correct_typed_answer"),
            broken_under=presets.without_recoveries("correct_typed_answer"),
            description="asked for a typed answer, first answers with prose around the JSON",
        ),
        Behaviour(
            "ignores_size_errors",
            twist=ignores_size_errors,
            fixed_by="shorten_oversized_arguments",
            fix=presets.recoveries("shorten_oversized_arguments"),
            description="resends oversized arguments after ARGUMENTS_TOO_LARGE",
        ),
        Behaviour(
            "writes_call_after_repeat",
            twist=repeats_then_writes_the_call,
            fixed_by="finalize_text_call_reply",
            fix=presets.recoveries("finalize_text_call_reply"),
            description="repeats a call after its result, then writes it as JSON text once "
            "tools are withdrawn (local Qwen2.5-Coder, issue 18)",
        ),
        Behaviour(
            "names_the_tool",
            twist=names_the_tool,
            fixed_by="call_referred_tool",
            fix=presets.recoveries("call_referred_tool"),
            description='tells the person "you can use the `note_list` function" instead '
            "of calling it (local Qwen2.5-Coder, issue 18)",
        ),
        Behaviour(
            "stops_after_first_call",
            twist=stops_after_first_call,
            fixed_by="call_requested_tool",
            fix=presets.recoveries("call_requested_tool"),
            description='answers "Done." after one successful call while a second tool the '
            "request names is still uncalled (local Qwen2.5-Coder, issue 18)",
        ),
        Behaviour(
            "refuses_after_invalid_args",
            twist=refuses_after_invalid_args,
            fixed_by="repair_invalid_arguments",
            fix=presets.recoveries("repair_invalid_arguments"),
            description="reads INVALID_ARGS and refuses (\"I'm sorry, but I can't assist "
            'with that.")',
        ),
    )
}


def behaviour(name: str) -> Behaviour:
    if name not in BEHAVIOURS:
        raise CliError(
            EvalCode.UNKNOWN_BEHAVIOUR,
            f"unknown scripted behaviour {name!r}; behaviours: {', '.join(BEHAVIOURS)}",
        )
    return BEHAVIOURS[name]
