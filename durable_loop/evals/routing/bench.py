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

import re
import statistics
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
    parse_executor,
    parse_router,
    ungrounded_arguments,
)
from durable_loop.core.tools import ToolSpec
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


class StepRecord(BaseModel):
    kind: str
    attempt: int
    ms: int
    json_valid: bool
    strict_json: bool
    schema_valid: bool
    error: str | None = None
    output: str = Field(default="", description="The model output, cut at 300 characters")


class QueryOutcome(BaseModel):
    id: str
    tags: list[str]
    expect: Choice
    expected_tool: str | None
    choice: Choice | None = None
    tool: str | None = None
    args: dict[str, JsonValue] | None = None
    correct: bool = False
    acceptable: bool = False
    args_correct: bool | None = None
    router_ms: int = 0
    executor_ms: int = 0
    repaired: bool = False
    ungrounded: list[str] = Field(
        default_factory=list,
        description="Required arguments filled with digits the query never gave: the "
        "pipeline asks (clarify) instead of calling the tool",
    )
    error: str | None = None
    steps: list[StepRecord] = Field(default_factory=list)


class Latency(BaseModel):
    mean: float = 0.0
    p50: float = 0.0
    p95: float = 0.0
    max: float = 0.0


class Metrics(BaseModel):
    queries: int
    json_validity: float
    strict_json_rate: float
    router_schema_validity: float
    args_schema_validity: float | None
    strict_accuracy: float
    acceptable_accuracy: float
    clarify_rate: float
    clarify_precision: float | None = Field(
        default=None, description="Of the clarify answers, the share labelled clarify"
    )
    clarify_recall: float | None = Field(
        default=None, description="Of the queries labelled clarify, the share answered clarify"
    )
    args_accuracy: float | None
    repair_rate: float
    failure_rate: float
    router_ms: Latency
    executor_ms: Latency
    accuracy_by_tag: dict[str, float]


class BenchReport(BaseModel):
    model: str
    base_url: str
    behaviour: str = Field(description="'live' or the scripted behaviour used offline")
    queries_file: str = ""
    route_only: bool = False
    started_at: str
    duration_s: float
    router: RouterConfig
    metrics: Metrics
    outcomes: list[QueryOutcome]


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
            outcome.repaired = True
            messages = with_repair(base, reply.text, f"{parsed.code}: {parsed.message}")
        return None

    async def run_query(self, query: LabelledQuery) -> QueryOutcome:
        outcome = QueryOutcome(
            id=query.id, tags=query.tags, expect=query.expect, expected_tool=query.tool
        )
        names = [s.name for s in self.specs]
        try:
            decision = await self._step("route", outcome, router_messages(query.text, names, []))
            if not isinstance(decision, RouterDecision):
                outcome.error = "router gave no valid output"
                return outcome
            outcome.choice, outcome.tool = decision.choice, decision.tool
            if decision.choice == "call_tool" and not self.route_only:
                spec = next(s for s in self.specs if s.name == decision.tool)
                call = await self._step(
                    "execute", outcome, executor_messages(query.text, spec, []), spec
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


def _share(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else 0.0


def _latency(values: list[int]) -> Latency:
    if not values:
        return Latency()
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Latency(
        mean=round(statistics.fmean(ordered), 1),
        p50=float(statistics.median(ordered)),
        p95=float(p95),
        max=float(ordered[-1]),
    )


def summarize(outcomes: list[QueryOutcome]) -> Metrics:
    steps = [s for o in outcomes for s in o.steps]
    routes = [s for s in steps if s.kind == "route"]
    executes = [s for s in steps if s.kind == "execute"]
    labelled_args = [o for o in outcomes if o.args_correct is not None]
    tags = sorted({t for o in outcomes for t in o.tags})
    clarified = [o for o in outcomes if o.choice == "clarify"]
    to_clarify = [o for o in outcomes if o.expect == "clarify"]
    return Metrics(
        queries=len(outcomes),
        json_validity=_share(sum(s.json_valid for s in steps), len(steps)),
        strict_json_rate=_share(sum(s.strict_json for s in steps), len(steps)),
        router_schema_validity=_share(sum(s.schema_valid for s in routes), len(routes)),
        args_schema_validity=_share(sum(s.schema_valid for s in executes), len(executes))
        if executes
        else None,
        strict_accuracy=_share(sum(o.correct for o in outcomes), len(outcomes)),
        acceptable_accuracy=_share(sum(o.acceptable for o in outcomes), len(outcomes)),
        clarify_rate=_share(len(clarified), len(outcomes)),
        clarify_precision=_share(sum(o.correct for o in clarified), len(clarified))
        if clarified
        else None,
        clarify_recall=_share(sum(o.correct for o in to_clarify), len(to_clarify))
        if to_clarify
        else None,
        args_accuracy=_share(sum(bool(o.args_correct) for o in labelled_args), len(labelled_args))
        if labelled_args
        else None,
        repair_rate=_share(sum(o.repaired for o in outcomes), len(outcomes)),
        failure_rate=_share(sum(o.error is not None for o in outcomes), len(outcomes)),
        router_ms=_latency([o.router_ms for o in outcomes if o.router_ms or o.choice]),
        executor_ms=_latency([o.executor_ms for o in outcomes if o.executor_ms]),
        accuracy_by_tag={
            tag: _share(
                sum(o.correct for o in outcomes if tag in o.tags),
                sum(tag in o.tags for o in outcomes),
            )
            for tag in tags
        },
    )


def report_path(out_dir: str | Path, report: BenchReport, suffix: str = "") -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{report.model}{suffix}").strip("_") or "model"
    return Path(out_dir) / f"routing_{slug}.json"


def save_report(report: BenchReport, out_dir: str | Path, suffix: str = "") -> Path:
    path = report_path(out_dir, report, suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path
