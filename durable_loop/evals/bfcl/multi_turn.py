"""Multi-turn entries: BFCL's stateful API classes (file system, trading bot, ...) as real
tools, one instance set per session, the question's turns sent one by one as messages of
the same session, scored by BFCL's multi-turn checker.

A tool runs its call through BFCL's own executor (``execute_multi_turn_func_call``), keyed
by the session, so the instances live as long as the session; the checker later replays
the executed calls, turn by turn and LLM turn by LLM turn, on fresh instances beside the
ground truth and compares state and results.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import re
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue
from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.service import RPCError

from durable_loop.core.contracts import RunResult
from durable_loop.core.names import session_workflow_id
from durable_loop.core.registry import ToolContext, ToolFunction
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.bfcl.entries import BfclEntry
from durable_loop.evals.bfcl.package import Bfcl
from durable_loop.evals.bfcl.score import Score
from durable_loop.evals.runner import EvalTarget, Job, classify
from durable_loop.evals.scenario import Action, Call, ModelView, Policy, Trace
from durable_loop.evals.schema import RunRecord


def instance_key(session_id: str) -> str:
    """The model name BFCL's executor keys a session's instances by."""
    return "durable_loop_" + re.sub(r"\W", "_", session_id)


@dataclass
class ApiCalls:
    """Which entry each session plays, and the call lines of each of its messages with the
    LLM turn that made them."""

    entries: dict[str, BfclEntry] = field(default_factory=dict)
    messages: dict[str, list[list[tuple[int, str]]]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def bind(self, session_id: str, entry: BfclEntry) -> None:
        self.entries[session_id] = entry

    def begin_message(self, session_id: str) -> None:
        self.messages[session_id].append([])

    def tool(self, bfcl: Bfcl, spec: ToolSpec) -> ToolFunction:
        name = spec.original_name or spec.name

        async def call(ctx: ToolContext, **arguments: Any) -> JsonValue:
            entry = self.entries[ctx.session_id]
            line = bfcl.call_strings([{name: arguments}])[0]
            self.messages[ctx.session_id][-1].append((ctx.turn, line))
            results, _ = bfcl.execute_calls(
                [line],
                entry.raw["initial_config"],
                entry.raw["involved_classes"],
                instance_key(ctx.session_id),
                entry.id,
            )
            return str(results[0])

        return call

    def decoded(self, session_id: str) -> list[list[list[str]]]:
        """Per message, per LLM turn, the call lines: BFCL's decoded multi-turn output."""
        out = []
        for message in self.messages.get(session_id, []):
            steps: dict[int, list[str]] = {}
            for turn, line in message:
                steps.setdefault(turn, []).append(line)
            out.append(list(steps.values()))
        return out


def score_multi_turn(bfcl: Bfcl, entry: BfclEntry, calls: ApiCalls, session_id: str) -> Score:
    decoded = calls.decoded(session_id)
    if len(decoded) != len(entry.answer):
        return Score(
            False, "multi_turn:force_terminated", [f"{len(decoded)} of {len(entry.answer)} turns"]
        )
    result = bfcl.multi_turn_checker(
        decoded, entry.answer, dict(entry.raw), entry.category, instance_key(session_id)
    )
    if result["valid"]:
        return Score(True)
    details = result.get("error_message") or result.get("details") or ""
    return Score(False, str(result.get("error_type")), [str(details)[:300]])


def _parse_line(line: str, functions: dict[str, list[str]]) -> Call:
    """A ground-truth line (``mv(source='a', destination='b')``, ``sort('f')``) as a call."""
    node = ast.parse(line, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), line
    name = node.func.id
    arguments = {
        param: ast.literal_eval(arg)
        for param, arg in zip(functions.get(name, []), node.args, strict=False)
    }
    arguments.update({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg})
    return Call(name, arguments)


def answer_policy(entry: BfclEntry, specs: list[ToolSpec]) -> Policy:
    """BFCL's ground truth, one call per reply: the turn is told by how many results the
    session has seen; "Done." when the turn's calls are made."""
    names = {spec.original_name or spec.name: spec.name for spec in specs}
    params = {f["name"]: list(f["parameters"].get("properties", {})) for f in entry.functions}
    turns = [[_parse_line(line, params) for line in turn] for turn in entry.answer or []]
    texts = entry.turns

    def policy(view: ModelView) -> Action:
        index = texts.index(view.last_user) if view.last_user in texts else 0
        before = sum(len(turn) for turn in turns[:index])
        step = len(view.results) - before
        if index >= len(turns) or step >= len(turns[index]):
            return Action.final()
        call = turns[index][step]
        return Action.call(names.get(call.name, call.name), call.arguments)

    return policy


async def run_multi_turn_job(
    job: Job, entry: BfclEntry, calls: ApiCalls, target: EvalTarget
) -> RunRecord:
    """One entry: a session, each turn a message, then the scenario's check (BFCL's)."""
    session_id = f"eval-{entry.category}-{uuid.uuid4().hex[:10]}"
    calls.bind(session_id, entry)
    started = time.monotonic()
    results: list[RunResult] = []
    await target.sessions.start(session_id, job.settings)
    for text in entry.turns:
        calls.begin_message(session_id)
        try:
            sending = target.sessions.send(session_id, text)
            results.append(await asyncio.wait_for(sending, timeout=job.timeout_s))
        except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
            # stop its retries competing with the next sessions for the model
            handle = target.sessions.client.get_workflow_handle(session_workflow_id(session_id))
            with contextlib.suppress(RPCError):
                await handle.terminate(f"eval run exceeded {job.timeout_s:.0f}s")
            break
    latency_ms = int((time.monotonic() - started) * 1000)
    last = results[-1] if len(results) == len(entry.turns) else None
    trace = Trace(
        status=last.status if last else "timeout",
        reply=last.reply if last else None,
        tool_calls=[(t.name, t.ok, t.error_codes) for r in results for t in r.tool_calls],
        transcript=[],
        draft=None,
        error_code=last.error.code if last and last.error else None,
        session_id=session_id,
    )
    problems = job.scenario.check(trace)
    return RunRecord(
        model=job.model,
        provider=job.provider,
        profile=job.profile,
        strategy=job.strategy,
        fallback=job.fallback,
        scenario=entry.category,
        entry=entry.id,
        trial=job.trial,
        tool_scenario=True,
        ok=not problems,
        failure=classify(last, trace, problems, job),
        problems=problems,
        latency_ms=latency_ms,
        turns=sum(r.turns for r in results),
        tool_calls=len(trace.tool_calls),
        status=trace.status,
        error_code=trace.error_code,
        session_id=session_id,
        recoveries=[name for r in results for name in r.recoveries],
    )
