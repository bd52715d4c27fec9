"""The benchmark's verdict as one typed object, and the tables printed beside it."""

from __future__ import annotations

import os
import statistics

from pydantic import BaseModel
from rich.table import Table

from bench.common import PAGE_BYTES, TURN_DEFINITION
from bench.runners import TUNING, LoopName, LoopRun

TARGET_RATIO = 1.2
LOOPS: tuple[LoopName, ...] = ("durable_loop", "naive")
BYTES_MEASURED = (
    "sum of len(event.SerializeToString()) over every event of every run (continue-as-new "
    "chain) of the session workflow, fetched from the server; per turn = total / turns done"
)
NAIVE_NOTE = (
    "a ratio is null where a naive session did not finish; per_turn_ratio_up_to_failure is "
    "measured over the turns it did finish, against the smallest size"
)


class LoopRatios(BaseModel):
    durable_loop: float | None
    naive: float | None


class SizedRatios(LoopRatios):
    sizes: list[int]


class TurnProfile(BaseModel):
    """Marginal bytes of single turns: does turn N cost what turn 1 cost?"""

    first: int
    median: int
    last: int
    max: int


class RatioAtFailure(BaseModel):
    measured_over_turns: int
    ratio_vs_smallest: float


class NaiveVerdict(BaseModel):
    failed_at_turn: int | None = None
    failed_size: int | None = None
    reason: str | None = None
    per_turn_ratio_up_to_failure: RatioAtFailure | None = None
    note: str = NAIVE_NOTE


class RunSummary(BaseModel):
    loop: LoopName
    size: int
    turns_done: int
    history_bytes: int
    bytes_per_turn: float | None
    turn_bytes: TurnProfile
    run_overhead_bytes: int
    bytes_per_turn_by_kind: dict[str, int]
    events: int
    runs: int
    events_per_run: list[int]
    continue_as_new: int
    wall_s: float
    s_per_turn: float | None
    llm_requests: int
    last_request_messages: int
    continuity_ok: bool
    failed_at_turn: int | None
    reason: str | None


class BenchSettings(BaseModel):
    sizes: list[int]
    tool_output_bytes: int = PAGE_BYTES
    continue_as_new_after_events: int
    inline_bytes: int
    worker_tuning: dict[str, int]
    server: str = "temporal dev server (embedded, in-memory), real HTTP to ScriptedLLM"
    cpus: int | None = os.cpu_count()


class HistoryGrowthReport(BaseModel):
    per_turn_ratio_1000_vs_10: LoopRatios
    per_turn_ratio_largest_vs_smallest: SizedRatios
    target_durable_loop_ratio_max: float = TARGET_RATIO
    target_met: bool
    naive: NaiveVerdict
    turn_definition: str = TURN_DEFINITION
    bytes_measured: str = BYTES_MEASURED
    results: list[RunSummary]
    settings: BenchSettings
    wall_s_total: float


# ---------------------------------------------------------------- building


def turn_profile(run: LoopRun) -> TurnProfile:
    per_turn = run.history.turn_bytes[: run.turns_done] or [0]
    return TurnProfile(
        first=per_turn[0],
        median=int(statistics.median(per_turn)),
        last=per_turn[-1],
        max=max(per_turn),
    )


def per_turn_by_kind(run: LoopRun, top: int = 8) -> dict[str, int]:
    turns = max(run.turns_done, 1)
    kinds = list(run.history.bytes_by_kind.items())[:top]
    return {kind: round(size / turns) for kind, size in kinds}


def ratio(runs: list[LoopRun], loop: LoopName, small: int, large: int) -> float | None:
    by_size = {r.size: r for r in runs if r.loop == loop}
    a, b = by_size.get(small), by_size.get(large)
    if a is None or b is None or a.failed_at_turn or b.failed_at_turn:
        return None
    if a.bytes_per_turn is None or b.bytes_per_turn is None:
        return None
    return round(b.bytes_per_turn / a.bytes_per_turn, 3)


def summarize(run: LoopRun) -> RunSummary:
    per_turn = run.bytes_per_turn
    return RunSummary(
        loop=run.loop,
        size=run.size,
        turns_done=run.turns_done,
        history_bytes=run.history.bytes,
        bytes_per_turn=round(per_turn, 1) if per_turn is not None else None,
        turn_bytes=turn_profile(run),
        run_overhead_bytes=run.history.run_overhead_bytes,
        bytes_per_turn_by_kind=per_turn_by_kind(run),
        events=run.history.events,
        runs=run.history.runs,
        events_per_run=run.history.events_per_run,
        continue_as_new=run.history.runs - 1,
        wall_s=round(run.wall_s, 2),
        s_per_turn=round(run.wall_s / run.turns_done, 4) if run.turns_done else None,
        llm_requests=run.llm_requests,
        last_request_messages=run.last_request_messages,
        continuity_ok=run.continuity_ok,
        failed_at_turn=run.failed_at_turn,
        reason=run.reason,
    )


def naive_verdict(runs: list[LoopRun], smallest: int) -> NaiveVerdict:
    naive = [r for r in runs if r.loop == "naive"]
    failed = next((r for r in naive if r.failed_at_turn is not None), None)
    if failed is None:
        return NaiveVerdict()
    base = next((r for r in naive if r.size == smallest and r is not failed), None)
    at_failure = None
    if base and base.bytes_per_turn and failed.bytes_per_turn:
        at_failure = RatioAtFailure(
            measured_over_turns=failed.turns_done,
            ratio_vs_smallest=round(failed.bytes_per_turn / base.bytes_per_turn, 3),
        )
    return NaiveVerdict(
        failed_at_turn=failed.failed_at_turn,
        failed_size=failed.size,
        reason=failed.reason,
        per_turn_ratio_up_to_failure=at_failure,
    )


def build_report(
    runs: list[LoopRun],
    *,
    sizes: list[int],
    continue_as_new_after_events: int,
    inline_bytes: int,
    wall_s: float,
) -> HistoryGrowthReport:
    small, large = min(sizes), max(sizes)
    durable = ratio(runs, "durable_loop", small, large)
    return HistoryGrowthReport(
        per_turn_ratio_1000_vs_10=LoopRatios(
            durable_loop=ratio(runs, "durable_loop", 10, 1000),
            naive=ratio(runs, "naive", 10, 1000),
        ),
        per_turn_ratio_largest_vs_smallest=SizedRatios(
            sizes=[small, large],
            durable_loop=durable,
            naive=ratio(runs, "naive", small, large),
        ),
        target_met=durable is not None and durable <= TARGET_RATIO,
        naive=naive_verdict(runs, small),
        results=[summarize(r) for r in runs],
        settings=BenchSettings(
            sizes=sizes,
            continue_as_new_after_events=continue_as_new_after_events,
            inline_bytes=inline_bytes,
            worker_tuning={k: v for k, v in TUNING.model_dump().items() if v is not None},
        ),
        wall_s_total=round(wall_s, 1),
    )


# ---------------------------------------------------------------- tables


def results_table(runs: list[LoopRun]) -> Table:
    out = Table(title="Workflow history per session (real histories, every run)")
    for name in ("loop", "size", "turns", "history bytes", "bytes/turn", "turn 1 → last"):
        out.add_column(name, justify="right")
    for name in ("events", "runs", "wall s", "status"):
        out.add_column(name, justify="right")
    for run in runs:
        profile = turn_profile(run)
        status = "ok" if run.continuity_ok else "[yellow]continuity?[/yellow]"
        if run.failed_at_turn is not None:
            status = f"[red]failed at {run.failed_at_turn}[/red]"
        out.add_row(
            run.loop,
            str(run.size),
            str(run.turns_done),
            f"{run.history.bytes:,}",
            f"{run.bytes_per_turn:,.0f}" if run.bytes_per_turn else "-",
            f"{profile.first:,} → {profile.last:,}",
            f"{run.history.events:,}",
            str(run.history.runs),
            f"{run.wall_s:.1f}",
            status,
        )
    return out


def breakdown_table(runs: list[LoopRun]) -> Table:
    largest = max(r.size for r in runs)
    shown = [r for r in runs if r.size == largest]
    out = Table(title=f"Where the bytes go: bytes per turn by event, {largest}-turn sessions")
    out.add_column("event (activity)")
    for run in shown:
        out.add_column(run.loop, justify="right")
    everything = [per_turn_by_kind(r, top=len(r.history.bytes_by_kind)) for r in shown]
    kinds = sorted(
        {k for r in shown for k in per_turn_by_kind(r)},
        key=lambda k: -max(table.get(k, 0) for table in everything),
    )
    for kind in kinds:
        cells = [table.get(kind) for table in everything]
        out.add_row(kind, *(f"{c:,}" if c is not None else "-" for c in cells))
    return out
