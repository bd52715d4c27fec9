"""Success rates, latency percentiles and failure counts over run records."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence

from durable_loop.evals.schema import GroupSummary, Latency, Rate, RunRecord


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default); 0 for no values."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


def rate(records: Iterable[RunRecord]) -> Rate:
    listed = list(records)
    ok = sum(1 for r in listed if r.ok)
    return Rate(runs=len(listed), ok=ok, success_rate=round(ok / len(listed), 4) if listed else 0.0)


def latency(records: Iterable[RunRecord]) -> Latency:
    values = [float(r.latency_ms) for r in records]
    return Latency(p50_ms=round(percentile(values, 50), 1), p95_ms=round(percentile(values, 95), 1))


def failures(records: Iterable[RunRecord]) -> dict[str, int]:
    return dict(Counter(r.failure for r in records if r.failure).most_common())


def recoveries(records: Iterable[RunRecord]) -> dict[str, int]:
    """How often each named recovery ran, over all the records."""
    return dict(Counter(name for r in records for name in r.recoveries).most_common())


def group(
    records: Sequence[RunRecord], key: Callable[[RunRecord], Hashable]
) -> dict[Hashable, list[RunRecord]]:
    out: dict[Hashable, list[RunRecord]] = {}
    for record in records:
        out.setdefault(key(record), []).append(record)
    return out


def summarize_group(
    records: list[RunRecord], *, by_scenario: bool, by_strategy: bool
) -> GroupSummary:
    first = records[0]
    tools = [r for r in records if r.tool_scenario]
    return GroupSummary(
        model=first.model,
        profile=first.profile,
        strategy=first.strategy if by_strategy else None,
        fallback=first.fallback if by_strategy else None,
        scenario=first.scenario if by_scenario else None,
        overall=rate(records),
        tool_scenarios=rate(tools) if tools else None,
        latency=latency(records),
        failures=failures(records),
        recoveries=recoveries(records),
        prompt_tokens=sum(r.prompt_tokens for r in records),
        cached_prompt_tokens=sum(r.cached_prompt_tokens for r in records),
    )


def summaries(
    records: Sequence[RunRecord], *, by_scenario: bool, by_strategy: bool
) -> list[GroupSummary]:
    def key(r: RunRecord) -> tuple[object, ...]:
        parts: list[object] = [r.model, r.profile]
        if by_strategy:
            parts += [r.strategy, r.fallback]
        if by_scenario:
            parts.append(r.scenario)
        return tuple(parts)

    return [
        summarize_group(rs, by_scenario=by_scenario, by_strategy=by_strategy)
        for rs in group(records, key).values()
    ]
