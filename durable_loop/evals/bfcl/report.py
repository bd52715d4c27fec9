"""BFCL's scores beside the usual eval report: accuracy per category, and the summary
rows with BFCL's own averaging (non-live AST and multi-turn unweighted, live AST weighted
by entries)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from durable_loop.evals import metrics
from durable_loop.evals.bfcl.entries import CATEGORIES, MULTI_TURN
from durable_loop.evals.bfcl.package import Bfcl
from durable_loop.evals.schema import RunRecord

NON_LIVE_AST = ("simple_python", "multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
AVERAGES = {"non_live_ast": NON_LIVE_AST, "live_ast": LIVE_AST, "multi_turn": MULTI_TURN}
WEIGHTED = {"live_ast"}


def _accuracy(rows: list[RunRecord]) -> dict[str, Any]:
    accuracy = sum(1 for r in rows if r.ok) / len(rows)
    return {"accuracy": accuracy, "total_count": len(rows), "display_accuracy": accuracy}


def _variant(r: RunRecord) -> str:
    return f"{r.model} / {r.profile} / {r.strategy}{' +fallback' if r.fallback else ''}"


def scores(bfcl: Bfcl, records: Sequence[RunRecord]) -> dict[str, dict[str, Any]]:
    """Per model x profile x strategy: each category's accuracy, latency and recoveries,
    and BFCL's averages over the AST categories that ran (``categories`` says which)."""
    out: dict[str, dict[str, Any]] = {}
    for key, rows in metrics.group(records, _variant).items():
        per_category: dict[str, dict[str, Any]] = {}
        for category in CATEGORIES:
            runs = [r for r in rows if r.scenario == category]
            if not runs:
                continue
            latency = metrics.latency(runs)
            per_category[category] = {
                **_accuracy(runs),
                "ok": sum(1 for r in runs if r.ok),
                "p50_ms": latency.p50_ms,
                "p95_ms": latency.p95_ms,
                "recoveries": metrics.recoveries(runs),
            }
        averages: dict[str, Any] = {}
        for name, members in AVERAGES.items():
            present = [m for m in members if m in per_category]
            if not present:
                continue
            parts = [per_category[m] for m in present]
            average = bfcl.weighted(parts) if name in WEIGHTED else bfcl.unweighted(parts)
            averages[name] = {"accuracy": average["accuracy"], "categories": present}
        out[str(key)] = {"categories": per_category, "averages": averages}
    return out


def markdown(table: dict[str, dict[str, Any]]) -> str:
    lines = ["", "## BFCL scores", ""]
    for variant, data in table.items():
        lines += [f"### {variant}", "", "| category | score | p50 s | p95 s | recoveries |"]
        lines.append("|---|---|---|---|---|")
        for category, row in data["categories"].items():
            used = ", ".join(f"{k} x{v}" for k, v in row["recoveries"].items()) or "-"
            lines.append(
                f"| {category} | {row['accuracy'] * 100:.1f}% ({row['ok']}/{row['total_count']})"
                f" | {row['p50_ms'] / 1000:.1f} | {row['p95_ms'] / 1000:.1f} | {used} |"
            )
        for name, average in data["averages"].items():
            over = ", ".join(average["categories"])
            lines.append(f"| **{name}** ({over}) | {average['accuracy'] * 100:.1f}% | | | |")
        lines.append("")
    return "\n".join(lines)


def write_scores(directory: Path, table: dict[str, dict[str, Any]]) -> list[Path]:
    """``bfcl_scores.json``, and the table appended to ``report.md``."""
    path = directory / "bfcl_scores.json"
    path.write_text(json.dumps(table, indent=2) + "\n")
    with (directory / "report.md").open("a") as report:
        report.write(markdown(table))
    return [path, directory / "report.md"]
