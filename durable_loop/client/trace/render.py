"""Rendering a :class:`Trace` as Rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from durable_loop.client.trace.arguments import arguments_line
from durable_loop.client.trace.models import CallRow, MessageRow, Trace, TurnRow

FINGERPRINT_CHARS = 10


def _call_text(call: CallRow) -> Text:
    text = Text(f"repair ({call.repair}): ", style="magenta") if call.repair else Text()
    text.append(f"{call.name} ")
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
    if call.arguments is not None:
        text.append("\n  " + arguments_line(call.arguments), style="dim")
    if call.sub_agent_session is not None:
        text.append(f"\n  sub-agent session {call.sub_agent_session}", style="cyan")
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


def _seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.2f}s"


def _attempts(turn: TurnRow) -> Text:
    """Each model tried: attempts (1 + retries), time from scheduling to the end, and the
    code it failed with; the model that answered last."""
    lines = []
    for tried in turn.attempts:
        if tried.attempts == 0:
            lines.append(Text(f"{tried.model} skipped (circuit open)", style="yellow"))
            continue
        line = Text(f"{tried.model} {tried.attempts}× ")
        if tried.error is not None:
            line.append(f"{tried.error.code} ", style="red")
        line.append(_seconds(tried.elapsed_ms), style="dim")
        lines.append(line)
    return Text(" → ").join(lines) if lines else Text("-")


def _message_row(message: MessageRow) -> tuple[Text, Text]:
    """The section heading of one message and its outcome."""
    if message.user_text is not None:
        heading = Text(f"user: {message.user_text}", style="bold cyan")
    else:
        heading = Text(f"message {message.message_id or '?'}", style="bold cyan")
    if message.error is not None:
        return heading, Text(message.error.code, style="red")
    return heading, Text(message.status or "", style="dim")


def trace_table(trace: Trace) -> Table:
    """One section per message: its user text and outcome, then its turns."""
    table = Table(title=f"session {trace.session_id}", title_justify="left")
    several_runs = len(trace.runs) > 1
    table.add_column("session turn", justify="right")
    if several_runs:
        table.add_column("run", justify="right")
    table.add_column("LLM ms", justify="right")
    table.add_column("model")
    table.add_column("tool calls (id: result)")
    table.add_column("tokens in/out", justify="right")
    table.add_column("plan")
    table.add_column("attempts")
    table.add_column("status")
    by_turn = {t.turn: t for t in trace.turns}
    lead = ["", "", ""] if several_runs else ["", ""]
    for message in trace.by_message:
        table.add_section()
        heading, outcome = _message_row(message)
        table.add_row(*lead, "", heading, "", "", "", outcome)
        for number in message.session_turns:
            if (turn := by_turn.get(number)) is not None:
                table.add_row(*_turn_cells(turn, several_runs))
    return table


def _turn_cells(turn: TurnRow, several_runs: bool) -> list[str | Text]:
    calls = Text("\n").join(_call_text(c) for c in turn.calls) if turn.calls else Text("-")
    cells: list[str | Text] = [str(turn.turn)]
    if several_runs:
        cells.append(str(turn.run_index))
    latency = "-" if turn.latency_ms is None else str(turn.latency_ms)
    if turn.cached:
        latency += " (cached)"
    return [
        *cells,
        latency,
        turn.model,
        calls,
        _tokens(turn),
        turn.plan_fingerprint[:FINGERPRINT_CHARS] or "-",
        _attempts(turn),
        _status(turn),
    ]


def footer_lines(trace: Trace) -> list[str]:
    """Counts that add up to the RunResults: messages, their turns, LLM attempts."""
    usage = trace.usage
    ended = [m for m in trace.by_message if m.status is not None]
    completed = sum(1 for m in ended if m.status == "completed")
    attempts = sum(a.attempts for t in trace.turns for a in t.attempts)
    if trace.store_read:
        stored = f"{trace.messages} stored ({trace.user_messages} from the user)"
    else:
        stored = "transcript store not read (--no-store): texts and store-only results unknown"
    lines = [
        f"messages: {len(trace.by_message)} ({completed} completed, {len(ended) - completed} "
        f"failed) · turns: {len(trace.turns)} · LLM attempts: {attempts} · "
        f"tokens: {usage.total_tokens} ({usage.input_tokens} in / {usage.output_tokens} out)",
        f"transcript: {stored}",
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
