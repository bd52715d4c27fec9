"""One route decision: from the pipeline's state and the last model output, what to do next.

The router pipeline (``workflows/router_pipeline.py``) carries each action out through its
activities, ``route-bench`` (``evals/routing/bench.py``) through direct model calls; both
read every model output with :func:`advance`, so each rule is written once.

A rule that a patch introduced returns :class:`CheckPatch` until the caller has put the
patch's answer in ``RouteState.patches``, then the same output is read again. The workflow
answers with ``workflow.patched`` at that very point, so its markers land where they
always did (and only on the paths that need them); the benchmark answers True, the
current code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from durable_loop.core.errors import ErrorCode
from durable_loop.core.router.contracts import RepairNote
from durable_loop.core.router.protocol import (
    Choice,
    ExecutorCall,
    RouterDecision,
    StepFailure,
    clarify_of_named_argument,
    clarify_question,
    is_toolless_clarify,
    parse_executor,
    parse_router,
    stated_arguments,
    ungrounded_arguments,
)
from durable_loop.core.tools import ToolSpec

GROUNDED_ARGUMENTS_PATCH = "router-grounded-arguments"
CLARIFY_NAMED_ARGUMENT_PATCH = "router-clarify-names-its-argument"
CLARIFY_CHECKED_PATCH = "router-clarify-checked"
TOO_LONG = StepFailure(code=ErrorCode.SCHEMA_INVALID, message="the output is too long")
TOOLLESS_CLARIFY_NOTE = "route: a clarify naming no tool and no argument: none"
Phase = Literal["start", "route", "execute", "check", "done"]


class ModelOutput(BaseModel):
    text: str
    truncated: bool = False


class AskRouter(BaseModel):
    repair: RepairNote | None = None


class AskExecutor(BaseModel):
    """``check``: the one request that tests a clarify against the message (no repair)."""

    tool: str
    repair: RepairNote | None = None
    check: bool = False


class Answer(BaseModel):
    mode: Literal["answer", "clarify"]
    question: str | None = None


class RunCall(BaseModel):
    call: ExecutorCall


class Fail(BaseModel):
    code: ErrorCode
    message: str


class CheckPatch(BaseModel):
    patch: str


Action = AskRouter | AskExecutor | Answer | RunCall | Fail | CheckPatch


class RouteState(BaseModel):
    """One message's way through the pipeline.

    ``said`` is what the executor is shown (see :func:`shown_to_executor`), which grounds
    its values. ``route_only`` is the benchmark's routing-only mode: no clarify is checked
    and the caller stops at the first executor request. The fields from ``choice`` on are
    what the trace reports."""

    model_config = ConfigDict(frozen=True)

    specs: list[ToolSpec]
    said: list[str]
    tools_on: bool = True
    repair_attempts: int = 1
    patches: dict[str, bool] = {}
    route_only: bool = False
    phase: Phase = "start"
    attempt: int = 0
    decision: RouterDecision | None = None
    check_of: Literal["clarify", "rescue"] | None = None
    set_aside: StepFailure | None = None
    router_output: str = ""
    call: ExecutorCall | None = None
    choice: Choice | None = None
    tool: str | None = None
    ungrounded: list[str] = []
    clarify_overruled: bool = False
    repairs: list[str] = []
    last_failure: StepFailure | None = None


class RouteStep(BaseModel):
    state: RouteState
    action: Action


def shown_to_executor(text: str, earlier: list[str], keep: int) -> list[str]:
    """The message and the recent conversation (``earlier`` ends with the message itself)."""
    return [text, *(earlier[-keep - 1 :] if keep else [])]


def advance(state: RouteState, output: ModelOutput | None = None) -> RouteStep:
    """The next action; ``output`` is the model's answer to the last one (None to begin)."""
    if state.phase == "start":
        if not state.specs or not state.tools_on:
            return _go(state, Answer(mode="answer"), phase="done", choice="none")
        return _go(state, AskRouter(), phase="route", attempt=1)
    if output is None or state.phase == "done":
        raise ValueError(f"no model output to read in phase {state.phase!r}")
    if state.phase == "route":
        return _read_route(state, output)
    if state.phase == "execute":
        return _read_call(state, output)
    return _read_check(state, output)


def with_patch(state: RouteState, patch: str, applies: bool) -> RouteState:
    return state.model_copy(update={"patches": {**state.patches, patch: applies}})


def _go(state: RouteState, action: Action, **changes: object) -> RouteStep:
    return RouteStep(state=state.model_copy(update=changes), action=action)


def _spec(state: RouteState, name: str | None) -> ToolSpec:
    return next(s for s in state.specs if s.name == name)


def _read_route(state: RouteState, output: ModelOutput) -> RouteStep:
    if output.truncated:
        return _repair(state.model_copy(update={"last_failure": TOO_LONG}), output.text, TOO_LONG)
    parsed = parse_router(output.text, state.specs)
    if isinstance(parsed, StepFailure):
        named = _named_clarify(state, output.text)
        if isinstance(named, CheckPatch):
            return RouteStep(state=state, action=named)
        parsed = named or parsed
    if isinstance(parsed, RouterDecision):
        return _decided(state.model_copy(update={"last_failure": None}), parsed)
    read = state.model_copy(update={"last_failure": parsed})
    rescued = _rescue(read, output.text, parsed)
    if isinstance(rescued, CheckPatch):
        return RouteStep(state=state, action=rescued)
    return rescued or _repair(read, output.text, parsed)


def _named_clarify(state: RouteState, text: str) -> RouterDecision | CheckPatch | None:
    """An invalid router output read as a clarify for the one tool whose required argument
    its question names (patch ``router-clarify-names-its-argument``); since
    ``router-clarify-checked`` the article "a" names no one-letter argument."""
    letters = clarify_of_named_argument(text, state.specs, letters=True)
    named = clarify_of_named_argument(text, state.specs)
    if (letters or named) is None:
        return None
    applies = state.patches.get(CLARIFY_NAMED_ARGUMENT_PATCH)
    if applies is None:
        return CheckPatch(patch=CLARIFY_NAMED_ARGUMENT_PATCH)
    checked = state.patches.get(CLARIFY_CHECKED_PATCH) if applies else False
    if checked is None:
        return CheckPatch(patch=CLARIFY_CHECKED_PATCH)
    if not applies:
        return None
    return named if checked else letters


def _rescue(state: RouteState, text: str, failure: StepFailure) -> RouteStep | CheckPatch | None:
    """An invalid router output that still says what to do, read without a repair request
    (patch ``router-clarify-checked``): a clarify without a tool whose question names one
    tool's argument by its distinctive words ("the tracking number" for ``tracking_id``)
    is checked like any clarify and becomes the call when the message holds its values; a
    clarify naming no tool's argument at all has no lookup to clarify and is ``none``."""
    named = clarify_of_named_argument(text, state.specs, distinctive=True)
    if named is None and not is_toolless_clarify(text, state.specs):
        return None
    checked = state.patches.get(CLARIFY_CHECKED_PATCH)
    if checked is None:
        return CheckPatch(patch=CLARIFY_CHECKED_PATCH)
    if not checked:
        return None
    if named is None:
        noted = state.model_copy(update={"repairs": [*state.repairs, TOOLLESS_CLARIFY_NOTE]})
        return _decided(noted, RouterDecision(choice="none"))
    if state.route_only:
        return None
    check = AskExecutor(tool=str(named.tool), check=True)
    rescue = {"check_of": "rescue", "decision": named, "set_aside": failure, "router_output": text}
    return _go(state, check, phase="check", **rescue)


def _decided(state: RouteState, decision: RouterDecision) -> RouteStep:
    """The router's decision, valid or read from an invalid output."""
    if decision.choice == "clarify" and not state.route_only:
        checked = state.patches.get(CLARIFY_CHECKED_PATCH)
        if checked is None:
            return RouteStep(state=state, action=CheckPatch(patch=CLARIFY_CHECKED_PATCH))
    else:
        checked = False
    noted = {"choice": decision.choice, "tool": decision.tool, "decision": decision}
    if decision.choice == "none":
        return _go(state, Answer(mode="answer"), phase="done", **noted)
    if decision.choice == "clarify":
        if checked:
            check = AskExecutor(tool=str(decision.tool), check=True)
            return _go(state, check, phase="check", check_of="clarify", **noted)
        clarify = Answer(mode="clarify", question=decision.question)
        return _go(state, clarify, phase="done", **noted)
    if state.call is not None:  # a rescued clarify's checked call
        return _go(state, RunCall(call=state.call), phase="done", clarify_overruled=True, **noted)
    ask = AskExecutor(tool=str(decision.tool))
    return _go(state, ask, phase="execute", attempt=1, **noted)


def _read_check(state: RouteState, output: ModelOutput) -> RouteStep:
    """The call to make instead of the router's clarify, when the message already holds
    what it asks for: kept only if every required value is the user's own. A small router
    asks "What is the flight number?" of "Is flight BA 117 on time?"; an invented or
    expanded value keeps the clarify."""
    decision = state.decision
    if decision is None:
        raise ValueError("no clarify to check")
    spec = _spec(state, decision.tool)
    call = TOO_LONG if output.truncated else parse_executor(output.text, spec, bare_args=True)
    failure = call if isinstance(call, StepFailure) else None
    read = state.model_copy(update={"last_failure": failure})
    stated = isinstance(call, ExecutorCall) and stated_arguments(call, spec, state.said)
    if state.check_of == "rescue":
        if not isinstance(call, ExecutorCall) or not stated:
            routing = read.model_copy(update={"phase": "route", "check_of": None})
            if state.set_aside is None:
                raise ValueError("a rescue's check without the router output's failure")
            return _repair(routing, state.router_output, state.set_aside)
        chosen = RouterDecision(choice="call_tool", tool=decision.tool)
        return _decided(read.model_copy(update={"call": call}), chosen)
    if not isinstance(call, ExecutorCall) or not stated:
        return _go(read, Answer(mode="clarify", question=decision.question), phase="done")
    overruled = {"choice": "call_tool", "clarify_overruled": True, "call": call}
    return _go(read, RunCall(call=call), phase="done", **overruled)


def _read_call(state: RouteState, output: ModelOutput) -> RouteStep:
    spec = _spec(state, state.tool)
    call = TOO_LONG if output.truncated else parse_executor(output.text, spec)
    if isinstance(call, StepFailure):
        return _repair(state.model_copy(update={"last_failure": call}), output.text, call)
    read = state.model_copy(update={"last_failure": None, "call": call})
    missing = ungrounded_arguments(call, spec, state.said)
    if missing:
        grounded = state.patches.get(GROUNDED_ARGUMENTS_PATCH)
        if grounded is None:
            return RouteStep(state=state, action=CheckPatch(patch=GROUNDED_ARGUMENTS_PATCH))
        if grounded:
            clarify = Answer(mode="clarify", question=clarify_question(spec, missing))
            return _go(read, clarify, phase="done", choice="clarify", ungrounded=missing)
    return _go(read, RunCall(call=call), phase="done")


def _repair(state: RouteState, previous_output: str, failure: StepFailure) -> RouteStep:
    """A repair prompt quoting the error, or the step's failure once the repair attempts
    are spent."""
    kind = "route" if state.phase == "route" else "execute"
    error = f"{failure.code}: {failure.message}"
    noted = state.model_copy(update={"repairs": [*state.repairs, f"{kind}: {error}"[:300]]})
    if state.attempt > state.repair_attempts:
        code = (
            ErrorCode.ROUTER_INVALID_OUTPUT
            if kind == "route"
            else ErrorCode.EXECUTOR_INVALID_OUTPUT
        )
        message = f"the {kind} step gave no valid output after repair: {error}"
        return _go(noted, Fail(code=code, message=message), phase="done")
    repair = RepairNote(previous_output=previous_output, error=error)
    action: Action = (
        AskRouter(repair=repair)
        if kind == "route"
        else AskExecutor(tool=str(state.tool), repair=repair)
    )
    return _go(noted, action, attempt=state.attempt + 1)
