"""The routing benchmark's records and report: what each query did and the metrics over
a run (see :mod:`durable_loop.evals.routing.bench` for what they measure)."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.config import RouterConfig
from durable_loop.core.router.protocol import Choice


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
    clarify_overruled: bool = Field(
        default=False,
        description="The router asked for a value the query already held; the executor "
        "filled every required argument from it and the tool was called",
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
    clarify_overruled: int = Field(
        default=0, description="Clarify answers replaced by a call from the query's own values"
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
        clarify_overruled=sum(o.clarify_overruled for o in outcomes),
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
