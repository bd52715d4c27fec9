"""The routing benchmark: labelled queries through the router -> executor steps.

Each query runs the pipeline's own prompts and route decision (``core/router/step.py``)
against one endpoint (a live OpenAI-compatible server or an offline scripted behaviour) and
is scored on:

* JSON validity: share of model outputs (every attempt) that contain a JSON object
  (``strict_json_rate``: the output was nothing but the object, code fences aside);
* schema validity: share of router outputs valid against the router schema, and of
  executor outputs whose ``args`` validate against the tool's schema;
* strict accuracy: final choice and tool equal the label; acceptable accuracy also takes
  the label's ``acceptable`` tools (multi-intent queries);
* clarify rate, precision (share of clarify answers whose label is clarify) and recall,
  repair rate, argument accuracy (labelled subset) and router/executor latency.

``route_only`` skips the executor step: routing is measured alone, in about half the time
(and consecutive router prompts share their prefix, which a local server caches).
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from temporalio.exceptions import ApplicationError

from durable_loop.activities.chat import chat_once
from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.router import clip
from durable_loop.core.config import RouterConfig
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.router.options import step_options
from durable_loop.core.router.prompts import executor_messages, router_messages, with_repair
from durable_loop.core.router.protocol import Choice, Extracted, StepFailure, extract_json
from durable_loop.core.router.step import (
    AskExecutor,
    AskRouter,
    CheckPatch,
    Fail,
    ModelOutput,
    RouteState,
    advance,
    shown_to_executor,
    with_patch,
)
from durable_loop.core.tools import ToolSpec
from durable_loop.evals.routing.report import BenchReport, QueryOutcome, StepRecord, summarize
from durable_loop.tools.ensembles.descriptors import DescriptorProblem, EnsembleLoadError
from durable_loop.tools.ensembles.toml_lines import dotted, key_lines, line_of


class LabelledQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    text: str = Field(min_length=1)
    expect: Choice
    tool: str | None = None
    acceptable: list[str] = Field(default_factory=list)
    args: dict[str, JsonValue] | None = None
    tags: list[str] = Field(default_factory=list)


def load_queries(path: str | Path, tool_names: list[str] | None = None) -> list[LabelledQuery]:
    """Read ``[[query]]`` tables; problems come with file, line and field."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problem = DescriptorProblem(file=str(file), field="(root)", message=f"invalid TOML: {err}")
        raise EnsembleLoadError([problem]) from None
    lines = key_lines(text)
    problems: list[DescriptorProblem] = []
    queries: list[LabelledQuery] = []

    def report(where: tuple[str | int, ...], message: str) -> None:
        problems.append(
            DescriptorProblem(
                file=str(file), line=line_of(lines, where), field=dotted(where), message=message
            )
        )

    for index, raw in enumerate(data.get("query", [])):
        try:
            query = LabelledQuery.model_validate(raw)
        except ValidationError as err:
            for item in err.errors():
                report(("query", index, *item["loc"]), item["msg"])
            continue
        known = tool_names or []
        for name in [query.tool, *query.acceptable]:
            if name is not None and tool_names is not None and name not in known:
                report(("query", index, "tool"), f"unknown tool {name!r}")
        if query.expect != "none" and query.tool is None:
            report(("query", index, "expect"), f"expect = {query.expect!r} needs a tool")
        if any(q.id == query.id for q in queries):
            report(("query", index, "id"), f"duplicate id {query.id!r}")
        queries.append(query)
    if not queries and not problems:
        report(("query",), "no [[query]] tables")
    if problems:
        raise EnsembleLoadError(problems)
    return queries


def _same(expected: JsonValue, got: JsonValue) -> bool:
    if isinstance(expected, str) and isinstance(got, str):
        return expected.strip().lower() == got.strip().lower()
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return float(expected) == float(got)
    return expected == got


def _note(outcome: QueryOutcome, state: RouteState) -> None:
    outcome.choice, outcome.tool = state.choice, state.tool
    outcome.args = None if state.call is None else state.call.args
    outcome.ungrounded = list(state.ungrounded)
    outcome.clarify_overruled = state.clarify_overruled


class RoutingBench:
    """Runs each query through the pipeline's own step (``core/router/step.py``), with
    direct model calls instead of activities and the current code at every patch point."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        endpoint: LlmEndpoint,
        specs: list[ToolSpec],
        *,
        router: RouterConfig | None = None,
        request_overrides: Mapping[str, JsonValue] | None = None,
        environ: Mapping[str, str] | None = None,
        route_only: bool = False,
    ) -> None:
        self.gateway = LlmGateway(http, environ or {})
        self.endpoint = endpoint
        self.specs = specs
        self.router = router or RouterConfig()
        self.options = step_options(self.router, request_overrides or {})
        self.route_only = route_only

    async def run_query(self, query: LabelledQuery) -> QueryOutcome:
        outcome = QueryOutcome(
            id=query.id, tags=query.tags, expect=query.expect, expected_tool=query.tool
        )
        state = RouteState(
            specs=self.specs,
            said=shown_to_executor(query.text, [], self.router.context_messages),
            repair_attempts=self.router.repair_attempts,
            route_only=self.route_only,
        )
        try:
            await self._route(query, outcome, state)
        except ApplicationError as err:
            outcome.error = f"{err.type}: {err.message}"[:300]
        self._score(query, outcome)
        return outcome

    async def _route(self, query: LabelledQuery, outcome: QueryOutcome, state: RouteState) -> None:
        """Carry out the step's actions as the workflow does; stop at its answer, its call
        or its failure (and, routing only, at the executor request)."""
        output: ModelOutput | None = None
        asked: AskRouter | AskExecutor | None = None
        ms = 0
        while True:
            step = advance(state, output)
            if isinstance(step.action, CheckPatch):
                state = with_patch(step.state, step.action.patch, True)
                continue
            if asked is not None and output is not None:
                self._record(outcome, asked, state.attempt, output.text, ms, step.state)
            state, action = step.state, step.action
            _note(outcome, state)
            if isinstance(action, Fail):
                failed = "router" if action.code == ErrorCode.ROUTER_INVALID_OUTPUT else "executor"
                outcome.error = f"{failed} gave no valid output"
            if isinstance(action, AskExecutor) and self.route_only and not action.check:
                return
            if not isinstance(action, AskRouter | AskExecutor):
                return
            asked = action
            output, ms = await self._ask(query, outcome, action)

    async def _ask(
        self, query: LabelledQuery, outcome: QueryOutcome, action: AskRouter | AskExecutor
    ) -> tuple[ModelOutput, int]:
        if isinstance(action, AskRouter):
            messages = router_messages(query.text, [s.name for s in self.specs], [])
        else:
            messages = executor_messages(query.text, self._spec(action.tool), [])
        if action.repair is not None:
            outcome.repaired = True
            messages = with_repair(messages, action.repair.previous_output, action.repair.error)
        reply = await chat_once(self.gateway, self.endpoint, messages, self.options)
        if isinstance(action, AskRouter):
            outcome.router_ms += reply.latency_ms
        else:
            outcome.executor_ms += reply.latency_ms
        text, truncated = clip(reply.text, self.router.max_output_bytes)
        return ModelOutput(text=text, truncated=truncated), reply.latency_ms

    def _record(
        self,
        outcome: QueryOutcome,
        asked: AskRouter | AskExecutor,
        attempt: int,
        text: str,
        ms: int,
        read: RouteState,
    ) -> None:
        """What one model output measured: JSON, schema and the step's reading of it."""
        kind = "route" if isinstance(asked, AskRouter) else "check" if asked.check else "execute"
        extracted = extract_json(text)
        failure = read.last_failure
        outcome.steps.append(
            StepRecord(
                kind=kind,
                attempt=1 if kind == "check" else attempt,
                ms=ms,
                json_valid=not isinstance(extracted, StepFailure),
                strict_json=isinstance(extracted, Extracted) and extracted.strict,
                schema_valid=failure is None,
                error=None if failure is None else failure.message[:300],
                output=text[:300],
            )
        )

    def _spec(self, name: str) -> ToolSpec:
        return next(s for s in self.specs if s.name == name)

    @staticmethod
    def _score(query: LabelledQuery, outcome: QueryOutcome) -> None:
        tool_matters = query.expect != "none"
        outcome.correct = outcome.choice == query.expect and (
            not tool_matters or outcome.tool == query.tool
        )
        outcome.acceptable = outcome.correct or (
            outcome.choice == "call_tool" and outcome.tool in query.acceptable
        )
        outcome.args_correct = None
        if query.args is not None and outcome.correct and query.expect == "call_tool":
            got = outcome.args or {}
            outcome.args_correct = all(_same(v, got.get(k)) for k, v in query.args.items())

    async def run(
        self,
        queries: list[LabelledQuery],
        behaviour: str = "live",
        queries_file: str = "",
        progress: Callable[[int, QueryOutcome], None] | None = None,
    ) -> BenchReport:
        started = datetime.now(UTC)
        clock = time.monotonic()
        outcomes: list[QueryOutcome] = []
        for query in queries:
            outcomes.append(await self.run_query(query))
            if progress is not None:
                progress(len(outcomes), outcomes[-1])
        return BenchReport(
            model=self.endpoint.model,
            base_url=self.endpoint.base_url,
            behaviour=behaviour,
            queries_file=queries_file,
            route_only=self.route_only,
            started_at=started.isoformat(timespec="seconds"),
            duration_s=round(time.monotonic() - clock, 2),
            router=self.router,
            metrics=summarize(outcomes),
            outcomes=outcomes,
        )
