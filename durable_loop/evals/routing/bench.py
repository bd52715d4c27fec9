"""The routing benchmark: labelled queries through the router -> executor steps.

Each query runs the pipeline's own prompts, parsers and repair rule against one endpoint
(a live OpenAI-compatible server or an offline scripted behaviour) and is scored on:

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
from durable_loop.core.config import RouterConfig
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import Message
from durable_loop.core.router.prompts import executor_messages, router_messages, with_repair
from durable_loop.core.router.protocol import (
    Choice,
    ExecutorCall,
    Extracted,
    RouterDecision,
    StepFailure,
    clarify_of_named_argument,
    extract_json,
    is_strict_json,
    is_toolless_clarify,
    parse_executor,
    parse_router,
    stated_arguments,
    ungrounded_arguments,
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


class RoutingBench:
    def __init__(
        self,
        http: httpx.AsyncClient,
        endpoint: LlmEndpoint,
        specs: list[ToolSpec],
        *,
        router: RouterConfig | None = None,
        environ: Mapping[str, str] | None = None,
        route_only: bool = False,
    ) -> None:
        self.gateway = LlmGateway(http, environ or {})
        self.endpoint = endpoint
        self.specs = specs
        self.router = router or RouterConfig()
        self.route_only = route_only

    def _options(self) -> dict[str, JsonValue]:
        options: dict[str, JsonValue] = {}
        if self.router.temperature is not None:
            options["temperature"] = self.router.temperature
        if self.router.max_tokens is not None:
            options["max_tokens"] = self.router.max_tokens
        if self.router.json_mode:
            options["response_format"] = {"type": "json_object"}
        return options

    async def _step(
        self,
        kind: str,
        query: LabelledQuery,
        outcome: QueryOutcome,
        base: list[Message],
        spec: ToolSpec | None = None,
    ) -> RouterDecision | ExecutorCall | None:
        """One step with the pipeline's repair rule; ``spec`` is the executor's tool."""
        messages = base
        for attempt in range(1 + self.router.repair_attempts):
            reply = await chat_once(self.gateway, self.endpoint, messages, self._options())
            parsed: RouterDecision | ExecutorCall | StepFailure
            if spec is None:
                outcome.router_ms += reply.latency_ms
                parsed = parse_router(reply.text, self.specs)
                if isinstance(parsed, StepFailure):  # as the pipeline reads it
                    parsed = clarify_of_named_argument(reply.text, self.specs) or parsed
            else:
                outcome.executor_ms += reply.latency_ms
                parsed = parse_executor(reply.text, spec)
            extracted = extract_json(reply.text)
            outcome.steps.append(
                StepRecord(
                    kind=kind,
                    attempt=attempt + 1,
                    ms=reply.latency_ms,
                    json_valid=not isinstance(extracted, StepFailure),
                    strict_json=isinstance(extracted, Extracted) and extracted.strict,
                    schema_valid=not isinstance(parsed, StepFailure),
                    error=parsed.message[:300] if isinstance(parsed, StepFailure) else None,
                    output=reply.text[:300],
                )
            )
            if not isinstance(parsed, StepFailure):
                return parsed
            if spec is None and (rescued := await self._rescue_route(reply.text, query, outcome)):
                return rescued
            outcome.repaired = True
            messages = with_repair(base, reply.text, f"{parsed.code}: {parsed.message}")
        return None

    async def run_query(self, query: LabelledQuery) -> QueryOutcome:
        outcome = QueryOutcome(
            id=query.id, tags=query.tags, expect=query.expect, expected_tool=query.tool
        )
        names = [s.name for s in self.specs]
        try:
            decision = await self._step(
                "route", query, outcome, router_messages(query.text, names, [])
            )
            if not isinstance(decision, RouterDecision):
                outcome.error = "router gave no valid output"
                return outcome
            outcome.choice, outcome.tool = decision.choice, decision.tool
            checked = decision.choice == "clarify" and not self.route_only
            if checked and (
                stated := await self._stated_call(query, outcome, self._spec(decision.tool))
            ):
                outcome.choice, outcome.args, outcome.clarify_overruled = (
                    "call_tool",
                    stated.args,
                    True,
                )
            # a rescued clarify (clarify_overruled already) made its call from the query's values
            elif decision.choice == "call_tool" and not (
                self.route_only or outcome.clarify_overruled
            ):
                spec = self._spec(decision.tool)
                call = await self._step(
                    "execute", query, outcome, executor_messages(query.text, spec, []), spec
                )
                if isinstance(call, ExecutorCall):
                    outcome.args = call.args
                    outcome.ungrounded = ungrounded_arguments(call, spec, [query.text])
                    if outcome.ungrounded:
                        outcome.choice = "clarify"
                else:
                    outcome.error = "executor gave no valid output"
        except ApplicationError as err:
            outcome.error = f"{err.type}: {err.message}"[:300]
        self._score(query, outcome)
        return outcome

    def _spec(self, name: str | None) -> ToolSpec:
        return next(s for s in self.specs if s.name == name)

    async def _rescue_route(
        self, text: str, query: LabelledQuery, outcome: QueryOutcome
    ) -> RouterDecision | None:
        """The pipeline's reading of an invalid router output before any repair request."""
        named = clarify_of_named_argument(text, self.specs, distinctive=True)
        if named is None:
            return RouterDecision(choice="none") if is_toolless_clarify(text, self.specs) else None
        if self.route_only:
            return None
        stated = await self._stated_call(query, outcome, self._spec(named.tool))
        if stated is None:
            return None
        outcome.args, outcome.clarify_overruled = stated.args, True
        return RouterDecision(choice="call_tool", tool=named.tool)

    async def _stated_call(
        self, query: LabelledQuery, outcome: QueryOutcome, spec: ToolSpec
    ) -> ExecutorCall | None:
        """The pipeline's check of a clarify: one executor request without repair; the call,
        if its required values are all the query's own."""
        messages = executor_messages(query.text, spec, [])
        reply = await chat_once(self.gateway, self.endpoint, messages, self._options())
        outcome.executor_ms += reply.latency_ms
        call = parse_executor(reply.text, spec, bare_args=True)
        outcome.steps.append(
            StepRecord(
                kind="check",
                attempt=1,
                ms=reply.latency_ms,
                json_valid=not isinstance(extract_json(reply.text), StepFailure),
                strict_json=is_strict_json(reply.text),
                schema_valid=not isinstance(call, StepFailure),
                error=call.message[:300] if isinstance(call, StepFailure) else None,
                output=reply.text[:300],
            )
        )
        if isinstance(call, ExecutorCall) and stated_arguments(call, spec, [query.text]):
            return call
        return None

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
