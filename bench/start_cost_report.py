"""The report of ``bench.session_start_cost``: per configuration the first task's CPU and
the memory each cached session holds, summarised over the runs, against the targets."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from pydantic import BaseModel

from bench.harness import machine
from bench.start_cost_measure import Plan, Run
from bench.start_cost_worker import ConfigName

BEFORE: ConfigName = "core_passthrough"
AFTER: ConfigName = "durable_loop"
TARGET_FIRST_TASK_MS = 15.0
TARGET_KB_PER_CACHED_SESSION = 64.0


class StartCostReport(BaseModel):
    sessions: int
    caches: list[int]
    runs: list[Run]
    before: ConfigName
    after: ConfigName
    summary: Summary
    """Per configuration: first task CPU (median over the runs of each run's p50);
    KB per cached session (worker RSS: the slope of RSS growth over the sessions the cache
    holds, the same N sessions at each cache size, so what the sessions leave outside the
    cache cancels out); the Python heap of one new session workflow instance
    (tracemalloc); with ``--trace-heap``, the Python heap's own slope."""
    target_met: bool
    traced_heap: bool
    note: str
    machine: dict[str, object]
    wall_s: float


class Summary(BaseModel):
    first_task_cpu_ms: dict[str, float] = {}
    kb_per_cached_session: dict[str, float] = {}
    instance_kb: dict[str, float] = {}
    python_heap_kb_per_cached_session: dict[str, float] = {}


def slope_kb(runs: list[Run], growth_mb: Callable[[Run], float | None]) -> float | None:
    """KB per cached session: the slope of growth over the sessions the cache holds."""
    points = [(float(r.cached_sessions), growth_mb(r)) for r in runs]
    xs = [x for x, y in points if y is not None]
    ys = [1024 * y for _, y in points if y is not None]
    if len(set(xs)) < 2:
        return None
    return round(statistics.linear_regression(xs, ys).slope, 1)


def summarise(runs: list[Run], configs: list[ConfigName]) -> Summary:
    summary = Summary()
    for config in configs:
        mine = [r for r in runs if r.config == config]
        p50 = statistics.median(r.first_task_cpu_ms_p50 for r in mine)
        summary.first_task_cpu_ms[config] = round(p50, 2)
        summary.instance_kb[config] = round(statistics.median(r.instance_kb for r in mine), 1)
        rss = slope_kb(mine, lambda r: r.rss_growth_mb)
        if rss is not None:
            summary.kb_per_cached_session[config] = rss
        heap = slope_kb(mine, lambda r: r.python_heap_growth_mb)
        if heap is not None:
            summary.python_heap_kb_per_cached_session[config] = heap
    return summary


def report_of(plan: Plan, runs: list[Run], *, wall_s: float) -> StartCostReport:
    summary = summarise(runs, plan.configs)
    met = (
        summary.first_task_cpu_ms.get(AFTER, float("inf")) <= TARGET_FIRST_TASK_MS
        and summary.kb_per_cached_session.get(AFTER, float("inf")) <= TARGET_KB_PER_CACHED_SESSION
    )
    return StartCostReport(
        sessions=plan.sessions,
        caches=plan.caches,
        runs=runs,
        before=BEFORE,
        after=AFTER,
        summary=summary,
        target_met=met,
        traced_heap=plan.trace_heap,
        note="first task CPU = thread CPU of creating the workflow instance + its first "
        "activation; KB per cached session = slope of worker RSS growth (N sessions, "
        "fresh worker process per run) over min(N, max_cached_workflows)",
        machine=machine(),
        wall_s=wall_s,
    )
