"""The replay report: per message, the original and the replay side by side (calls,
final answer, tokens, latency), and the totals; ``replay.json`` and ``report.md`` in a
directory of its own under the report root."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from durable_loop.evals.replay.compare import MessageResult


def totals(every: Sequence[MessageResult]) -> dict[str, Any]:
    """Over the messages replayed; ``not_replayed`` counts the others."""
    results = [r for r in every if r.not_replayed is None]
    n = len(results)
    return {
        "messages": n,
        "not_replayed": len(every) - n,
        "same_calls_rate": sum(r.same_calls for r in results) / n if n else 0.0,
        "same_answer_rate": sum(r.same_answer for r in results) / n if n else 0.0,
        "calls_matched": sum(r.matched_calls for r in results),
        "calls_different": sum(r.different_calls for r in results),
        "calls_served_from_record": sum(r.served for r in results),
        "calls_new": sum(r.new for r in results),
        "calls_new_ran": sum(r.new_ran for r in results),
        "calls_new_not_run": sum(r.new - r.new_ran for r in results),
        "judge": _verdicts(results),
        "tokens": {
            "original": sum(r.original.tokens for r in results),
            "replay": sum(r.replay.tokens for r in results),
        },
        "latency_ms": {
            "original": sum(r.original.latency_ms for r in results),
            "replay": sum(r.replay.latency_ms for r in results),
        },
    }


def _verdicts(results: Sequence[MessageResult]) -> dict[str, int] | None:
    """Verdicts counted, or None when no judge was asked."""
    if all(r.judge is None for r in results):
        return None
    counts = dict.fromkeys(("same", "different", "unsure"), 0)
    for r in results:
        if r.judge is not None:
            counts[r.judge] += 1
    return counts


def _cell(text: str | None, limit: int = 60) -> str:
    flat = (text or "").replace("\n", " ").replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _summary(t: dict[str, Any], names_only: Sequence[str]) -> list[str]:
    judged = t["judge"]
    skipped = (
        f" ({t['not_replayed']} more not replayed: their conversation could not be rebuilt)"
        if t["not_replayed"]
        else ""
    )
    lines = [
        f"{t['messages']} messages{skipped}: same calls {t['same_calls_rate']:.0%}, "
        f"same final answer {t['same_answer_rate']:.0%} (exact)"
        + (
            f", judge: same {judged['same']}, different {judged['different']}, "
            f"unsure {judged['unsure']}"
            if judged
            else ""
        )
        + f"; calls matched {t['calls_matched']}, different {t['calls_different']}, served "
        f"from the record {t['calls_served_from_record']}, new {t['calls_new']} (ran "
        f"{t['calls_new_ran']}, not run {t['calls_new_not_run']}).",
        f"Tokens {t['tokens']['original']} → {t['tokens']['replay']}, "
        f"latency {t['latency_ms']['original']} ms → {t['latency_ms']['replay']} ms.",
    ]
    if names_only:
        lines.append(
            f"Tools were offered by name only ({', '.join(names_only)}: no --tools, and "
            "the session was recorded before replies recorded tool schemas): the model did "
            "not see their parameter schemas."
        )
    return lines


def markdown(results: Sequence[MessageResult], *, names_only: Sequence[str] = ()) -> str:
    lines = [
        "# Replay eval",
        "",
        *_summary(totals(results), names_only),
        "",
        "| session | # | message | calls orig → replay | same calls | new (ran) | same answer "
        "| judge | tokens | latency ms | answer orig / replay |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.not_replayed is not None:
            why = f"not replayed: {_cell(r.not_replayed, 120)}"
            cells = [r.session_id, str(r.index), _cell(r.original.text, 40), why, *[""] * 7]
            lines.append("| " + " | ".join(cells) + " |")
            continue
        lines.append(
            f"| {r.session_id} | {r.index} | {_cell(r.original.text, 40)} "
            f"| {len(r.original.calls)} → {len(r.replay.calls)} "
            f"| {'yes' if r.same_calls else 'no'} | {r.new} ({r.new_ran}) "
            f"| {'yes' if r.same_answer else 'no'} | {r.judge or '-'} "
            f"| {r.original.tokens} → {r.replay.tokens} "
            f"| {r.original.latency_ms} → {r.replay.latency_ms} "
            f"| {_cell(r.original.answer)} / {_cell(r.replay.answer)} |"
        )
    return "\n".join(lines) + "\n"


def write_replay_report(
    root: Path,
    results: Sequence[MessageResult],
    *,
    tool_schemas: str = "given",
    names_only: Sequence[str] = (),
) -> Path:
    """``tool_schemas``: where the offered schemas came from (``ReplayTools.schema_source``);
    ``names_only``: the tools offered without one."""
    directory = root / f"replay-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}"
    directory.mkdir(parents=True, exist_ok=True)
    document = {
        "totals": totals(results),
        "tool_schemas": tool_schemas,
        "tools_by_name_only": list(names_only),
        "messages": [r.model_dump(mode="json") for r in results],
    }
    (directory / "replay.json").write_text(json.dumps(document, indent=2) + "\n")
    (directory / "report.md").write_text(markdown(results, names_only=names_only))
    return directory
