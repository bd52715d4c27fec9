"""Write a run's report directory: raw records, summaries, a Markdown table, a PNG chart."""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, TypeAdapter

from durable_loop.core.extras import MissingExtra, import_extra
from durable_loop.evals import metrics
from durable_loop.evals.schema import GroupSummary, RunRecord, Summary

log = logging.getLogger(__name__)

SUMMARIES = TypeAdapter(list[GroupSummary])


def report_dir(root: Path, now: datetime | None = None) -> Path:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    path = root / stamp
    suffix = 1
    while path.exists():
        suffix += 1
        path = root / f"{stamp}-{suffix}"
    path.mkdir(parents=True)
    return path


def build_summary(
    records: Sequence[RunRecord],
    *,
    mode: str,
    scenarios: list[str],
    trials: int,
    started_at: str,
    resumed_runs: int = 0,
) -> Summary:
    tools = [r for r in records if r.tool_scenario]
    return Summary(
        started_at=started_at,
        resumed_runs=resumed_runs,
        mode=mode,
        scenarios=scenarios,
        trials=trials,
        overall=metrics.rate(records),
        tool_scenarios=metrics.rate(tools),
        latency=metrics.latency(records),
        failures=metrics.failures(records),
        recoveries=metrics.recoveries(records),
        by_model=metrics.summaries(records, by_scenario=False, by_strategy=False),
    )


def _dump(path: Path, model: BaseModel | list[GroupSummary]) -> None:
    if isinstance(model, BaseModel):
        path.write_text(model.model_dump_json(indent=2) + "\n")
    else:
        path.write_bytes(SUMMARIES.dump_json(model, indent=2) + b"\n")


def is_matrix(records: Sequence[RunRecord]) -> bool:
    return len({(r.strategy, r.fallback) for r in records}) > 1


def write_report(directory: Path, records: Sequence[RunRecord], summary: Summary) -> list[Path]:
    """Every file of the report; returns their paths."""
    written = [directory / "runs.jsonl", directory / "summary.json"]
    with (directory / "runs.jsonl").open("w") as out:
        for record in records:
            out.write(record.model_dump_json() + "\n")
    _dump(directory / "summary.json", summary)
    by_scenario = metrics.summaries(records, by_scenario=True, by_strategy=False)
    _dump(directory / "summary_by_scenario.json", by_scenario)
    written.append(directory / "summary_by_scenario.json")
    strategy_rows = metrics.summaries(records, by_scenario=True, by_strategy=True)
    if is_matrix(records):
        _dump(directory / "summary_by_scenario_and_strategy.json", strategy_rows)
        written.append(directory / "summary_by_scenario_and_strategy.json")
    text = markdown(records, summary)
    try:
        written.append(chart(directory / "matrix.png", records))
    except MissingExtra as err:
        log.warning("no chart in the report: %s", err.coded())
        text += f"\nNo chart: {err.coded()}\n"
    (directory / "report.md").write_text(text)
    written.append(directory / "report.md")
    return written


def _pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def _variant(r: RunRecord) -> str:
    return f"{r.strategy}{' +fallback' if r.fallback else ''}"


def markdown(records: Sequence[RunRecord], summary: Summary) -> str:
    """Success per scenario for each model x profile x strategy, then latency and failures."""
    scenarios = summary.scenarios
    header = ["model", "profile", "strategy", *scenarios, "tool scenarios", "p50 s", "p95 s"]
    lines = [
        f"# Eval report ({summary.mode}, {summary.trials} trials, {summary.started_at})",
        "",
        f"Overall {_pct(summary.overall.success_rate)} ({summary.overall.ok}/"
        f"{summary.overall.runs}); tool scenarios {_pct(summary.tool_scenarios.success_rate)}."
        + (
            f" {summary.resumed_runs} of the runs were recorded before this invocation (--resume)."
            if summary.resumed_runs
            else ""
        ),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    groups = metrics.group(records, lambda r: (r.model, r.profile, _variant(r)))
    for key, rows in groups.items():
        model, profile, variant = (str(part) for part in key)  # type: ignore[attr-defined]
        cells = [str(model), str(profile), str(variant)]
        for name in scenarios:
            runs = [r for r in rows if r.scenario == name]
            rate = metrics.rate(runs)
            cells.append(f"{rate.ok}/{rate.runs}" if runs else "-")
        tools = metrics.rate([r for r in rows if r.tool_scenario])
        lat = metrics.latency(rows)
        cells += [_pct(tools.success_rate), f"{lat.p50_ms / 1000:.1f}", f"{lat.p95_ms / 1000:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Failure reasons:", ""]
    for key, rows in groups.items():
        model, profile, variant = (str(part) for part in key)  # type: ignore[attr-defined]
        reasons = metrics.failures(rows)
        text = ", ".join(f"{k} x{v}" for k, v in reasons.items()) or "none"
        lines.append(f"- {model} / {profile} / {variant}: {text}")
    lines += recovery_lines(records, scenarios)
    lines += prompt_cache_lines(groups)
    return "\n".join(lines) + "\n"


def prompt_cache_lines(groups: Mapping[Hashable, Sequence[RunRecord]]) -> list[str]:
    """How much of each variant's prompts the server read from its cache. A llama.cpp
    server keeps the prompts it has seen, so a second run of the same entries is several
    times faster than the first: latencies compare only at a like share."""
    if not any(r.cached_prompt_tokens for rows in groups.values() for r in rows):
        return []
    lines = ["", "Prompt tokens read from the server's cache (latency falls as this rises):", ""]
    for key, rows in groups.items():
        model, profile, variant = (str(part) for part in key)  # type: ignore[attr-defined]
        total = sum(r.prompt_tokens for r in rows)
        cached = sum(r.cached_prompt_tokens for r in rows)
        share = _pct(cached / total) if total else "-"
        lines.append(f"- {model} / {profile} / {variant}: {share} ({cached:,} of {total:,})")
    return lines


def recovery_lines(records: Sequence[RunRecord], scenarios: list[str]) -> list[str]:
    """Named recoveries per model x profile x strategy x scenario (runs that used any /
    runs, and the count per recovery), so before/after runs show what each one costs."""
    used = [r for r in records if r.recoveries]
    if not used:
        return ["", "Recoveries: none used."]
    lines = ["", "Recoveries (runs that used one / runs: count per recovery):", ""]
    groups = metrics.group(records, lambda r: (r.model, r.profile, _variant(r), r.scenario))
    order = {name: i for i, name in enumerate(scenarios)}
    for key in sorted(groups, key=lambda k: (*k[:3], order.get(k[3], 0))):  # type: ignore[index]
        rows = groups[key]
        counts = metrics.recoveries(rows)
        if not counts:
            continue
        model, profile, variant, scenario = (str(part) for part in key)  # type: ignore[attr-defined]
        users = sum(1 for r in rows if r.recoveries)
        text = ", ".join(f"{name} x{n}" for name, n in counts.items())
        lines.append(f"- {model} / {profile} / {variant} / {scenario}: {users}/{len(rows)}: {text}")
    return lines


def chart(path: Path, records: Sequence[RunRecord]) -> Path:
    """A heatmap of tool-scenario success: rows model x profile, columns strategy."""
    import_extra("matplotlib", "an eval chart").use("Agg")
    plt = import_extra("matplotlib.pyplot", "an eval chart")

    rows = list(dict.fromkeys((r.model, r.profile) for r in records))
    cols = list(dict.fromkeys(_variant(r) for r in records))
    grid = []
    for model, profile in rows:
        line = []
        for col in cols:
            runs = [
                r
                for r in records
                if (r.model, r.profile) == (model, profile) and _variant(r) == col
            ]
            tools = [r for r in runs if r.tool_scenario] or runs
            line.append(metrics.rate(tools).success_rate if tools else float("nan"))
        grid.append(line)
    fig, ax = plt.subplots(figsize=(2.0 + 1.6 * len(cols), 1.2 + 0.5 * len(rows)))
    image = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), [f"{m} / {p}" for m, p in rows])
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            ax.text(j, i, "-" if value != value else f"{value:.0%}", ha="center", va="center")
    ax.set_title("tool-scenario success")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
