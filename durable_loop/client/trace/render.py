"""Rendering a :class:`Trace` as Rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from durable_loop.client.trace.models import CallRow, Trace, TurnRow

FINGERPRINT_CHARS = 10


def _call_text(call: CallRow) -> Text:
    text = Text(f"{call.name} ")
    text.append(call.call_id, style="dim")
    if call.ok is None:
        text.append(" ?", style="yellow")
    elif call.ok:
        text.append(" ok", style="green")
    else:
        text.append(" " + (",".join(call.error_codes) or "failed"), style="red")
    if call.reused:
        text.append(" (reused)", style="dim")
    elif not call.executed and call.ok is not None:
        text.append(" (not run)", style="dim")
    return text


def _status(turn: TurnRow) -> Text:
    if turn.error is not None:
        return Text(turn.error.code, style="red")
    if turn.pending:
        return Text("pending", style="yellow")
    status = Text(turn.finish_reason or "", style="dim")
    for warning in turn.warnings:
        status.append(f"\nwarning: {warning}", style="yellow")
    return status


def _tokens(turn: TurnRow) -> str:
    if turn.input_tokens is None and turn.output_tokens is None:
        return "-"
    return f"{turn.input_tokens or 0}/{turn.output_tokens or 0}"


def trace_table(trace: Trace) -> Table:
    table = Table(title=f"session {trace.session_id}", title_justify="left")
    table.add_column("turn", justify="right")
    if len(trace.runs) > 1:
        table.add_column("run", justify="right")
    table.add_column("LLM ms", justify="right")
    table.add_column("model")
    table.add_column("tool calls (id: result)")
    table.add_column("tokens in/out", justify="right")
    table.add_column("plan")
    table.add_column("status")
    for turn in trace.turns:
        if turn.user_text is not None:
            table.add_section()
            user = Text(f"user: {turn.user_text}", style="bold cyan")
            table.add_row(*(["", "", ""] if len(trace.runs) > 1 else ["", ""]), "", user)
        calls = Text("\n").join(_call_text(c) for c in turn.calls) if turn.calls else Text("-")
        cells: list[str | Text] = [str(turn.turn)]
        if len(trace.runs) > 1:
            cells.append(str(turn.run_index))
        latency = "-" if turn.latency_ms is None else str(turn.latency_ms)
        if turn.cached:
            latency += " (cached)"
        cells += [
            latency,
            turn.model,
            calls,
            _tokens(turn),
            turn.plan_fingerprint[:FINGERPRINT_CHARS] or "-",
            _status(turn),
        ]
        table.add_row(*cells)
    return table


def footer_lines(trace: Trace) -> list[str]:
    usage = trace.usage
    lines = [
        f"messages: {trace.messages} stored ({trace.user_messages} from the user) · "
        f"turns: {len(trace.turns)} · tokens: {usage.total_tokens} "
        f"({usage.input_tokens} in / {usage.output_tokens} out)",
        "runs: "
        + ", ".join(
            f"#{r.run_index} {r.run_id[:8]} ({r.event_count} events, {r.history_bytes} B)"
            for r in trace.runs
        ),
    ]
    if trace.ui_url:
        lines.append(f"Web UI: {trace.ui_url}")
    return lines


def print_trace(trace: Trace, console: Console | None = None) -> None:
    console = console or Console()
    console.print(trace_table(trace))
    for line in footer_lines(trace):
        console.print(line, highlight=False, soft_wrap=True)
