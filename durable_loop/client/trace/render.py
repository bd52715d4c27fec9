"""Rendering a :class:`Trace` for a terminal: one block per message, one per turn.

Every line wraps at the console's width with its indent kept, so nothing is cut to an
ellipsis and the trace reads the same at 80 columns as at 200: a message's heading and
user text, each turn (model, LLM time, tokens, plan, how it ended) with its tool calls
(arguments, result, sub-agent) and the decisions, budget changes, cancels and refusals
that followed it, then the reply; entries outside any message between the blocks.

Tool names, call ids, arguments and session ids (the model's or a person's) are shown
through :mod:`durable_loop.core.visible_text`, so a CR/LF or a bidi control in them shows
as ``\\n`` / ``\\u202e`` instead of faking a line or reordering one.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from durable_loop.client.trace.arguments import arguments_line
from durable_loop.client.trace.entries import TraceEntry
from durable_loop.client.trace.models import BoundedText, CallRow, MessageRow, Trace, TurnRow
from durable_loop.client.trace.render_entries import entry_text, named_tool
from durable_loop.core.visible_text import visible

FINGERPRINT_CHARS = 10


def _indented(text: Text, level: int) -> RenderableType:
    return Padding(text, (0, 0, 0, 2 * level), expand=False) if level else text


def _ms(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def tool_label(call: CallRow) -> str:
    return named_tool(call.name, call.original_name)


def _call_lines(call: CallRow) -> Iterator[tuple[Text, int]]:
    line = Text(f"repair ({call.repair}): ", style="magenta") if call.repair else Text()
    line.append(f"{tool_label(call)} ")
    line.append(visible(call.call_id), style="dim")
    if call.ok is None and call.sub_agent_status in ("running", "awaiting_approval"):
        line.append(" running", style="yellow")
    elif call.ok is None:
        line.append(" ?", style="yellow")
    elif call.ok:
        line.append(" ok", style="green")
    else:
        line.append(" " + (",".join(call.error_codes) or "failed"), style="red")
    if call.reused:
        line.append(" (reused)", style="dim")
    elif not call.executed and call.ok is not None:
        line.append(" (not run)", style="dim")
    if call.duration_ms is not None:
        line.append(f" · {_ms(call.duration_ms)}", style="dim")
    yield line, 1
    if call.arguments is not None:
        yield Text(visible(arguments_line(call.arguments)), style="dim"), 2
    if call.sub_agent_session is not None:
        child = Text(f"sub-agent session {visible(call.sub_agent_session)}", style="cyan")
        if call.sub_agent_status is not None:
            child.append(f": {call.sub_agent_status.replace('_', ' ')}")
        if call.sub_agent_error is not None:
            child.append(f" {call.sub_agent_error.code}", style="red")
        if call.sub_agent_usage is not None:
            child.append(f" · {call.sub_agent_usage.total_tokens} tokens", style="dim")
        if call.sub_agent_held:
            held = ", ".join(visible(h) for h in call.sub_agent_held)
            child.append(f" · holds {held}", style="yellow")
        yield child, 2


def _turn_heading(turn: TurnRow, several_runs: bool) -> Text:
    line = Text(f"turn {turn.turn}", style="bold")
    if several_runs:
        line.append(f" (run {turn.run_index})", style="dim")
    line.append(f" · {turn.model}")
    if turn.latency_ms is not None:
        line.append(f" · LLM {turn.latency_ms} ms")
    if turn.cached:
        line.append(" (cached)", style="dim")
    if turn.input_tokens is not None or turn.output_tokens is not None:
        line.append(f" · tokens in/out {turn.input_tokens or 0}/{turn.output_tokens or 0}")
    if turn.plan_fingerprint:
        line.append(f" · plan {turn.plan_fingerprint[:FINGERPRINT_CHARS]}", style="dim")
    if turn.error is not None:
        line.append(f" · {turn.error.code}", style="red")
    elif turn.pending:
        line.append(" · pending", style="yellow")
    elif turn.finish_reason:
        line.append(f" · {turn.finish_reason}", style="dim")
    return line


def _attempts(turn: TurnRow) -> Text | None:
    """Each model tried, when more than one attempt was made: attempts (1 + retries), time
    from scheduling to the end, and the code it failed with."""
    tried = turn.attempts
    if len(tried) <= 1 and all(t.attempts <= 1 for t in tried):
        return None
    parts = []
    for attempt in tried:
        if attempt.attempts == 0:
            parts.append(Text(f"{attempt.model} skipped (circuit open)", style="yellow"))
            continue
        part = Text(f"{attempt.model} {attempt.attempts}× ")
        if attempt.error is not None:
            part.append(f"{attempt.error.code} ", style="red")
        elapsed = attempt.elapsed_ms
        part.append("-" if elapsed is None else f"{elapsed / 1000:.2f}s", style="dim")
        parts.append(part)
    return Text("tries: ") + Text(" → ").join(parts)


def _turn_block(turn: TurnRow, several_runs: bool) -> Iterator[tuple[Text, int]]:
    yield _turn_heading(turn, several_runs), 0
    if turn.gate is not None:
        yield Text(f"conversation gate: {turn.gate}", style="dim"), 1
    if turn.error is not None and turn.error.message:
        yield Text(turn.error.message, style="red"), 1
    for warning in turn.warnings:
        yield Text(f"warning: {warning}", style="yellow"), 1
    if (tries := _attempts(turn)) is not None:
        yield tries, 1
    for call in turn.calls:
        yield from _call_lines(call)


def _bounded(label: str, text: BoundedText, style: str) -> Text:
    line = Text(f"{label}: ", style="bold")
    line.append(text.text, style=style)
    if text.truncated:
        line.append(f"… ({text.chars} chars; --full for all)", style="dim")
    return line


def _message_heading(number: int, message: MessageRow) -> Iterator[tuple[Text, int]]:
    line = Text(f"message {number}", style="bold cyan")
    if message.status is not None:
        style = {"completed": "green", "awaiting_approval": "yellow"}.get(message.status, "red")
        line.append(f" · {message.status.replace('_', ' ')}", style=style)
    else:
        line.append(" · no result in history", style="dim")
    if message.error is not None and message.status != "cancelled":
        line.append(f" {message.error.code}", style="red")
    if message.message_id:
        line.append(f" · {message.message_id}", style="dim")
    if message.output_corrections:
        line.append(f" · typed answer after {message.output_corrections} correction(s)")
    yield line, 0
    if message.user_text is not None:
        yield Text(f"user: {message.user_text}", style="bold cyan"), 0
    if message.error is not None and message.error.message:
        yield Text(message.error.message, style="red"), 1


def _message_block(
    number: int, message: MessageRow, trace: Trace, entries: list[TraceEntry]
) -> Iterator[tuple[Text, int]]:
    yield from _message_heading(number, message)
    by_turn = {t.turn: t for t in trace.turns}
    several_runs = len(trace.runs) > 1
    mine = set(message.session_turns)
    for entry in entries:
        if entry.after_turn not in mine:
            yield entry_text(entry), 1
    for turn_number in message.session_turns:
        if (turn := by_turn.get(turn_number)) is not None:
            yield from _turn_block(turn, several_runs)
        for entry in entries:
            if entry.after_turn == turn_number:
                yield entry_text(entry), 1
    if message.reply is not None:
        yield _bounded("reply", message.reply, ""), 0


def trace_lines(trace: Trace) -> Iterator[tuple[Text, int]]:
    """(line, indent level) of the whole trace, in order."""
    loose: dict[int | None, list[TraceEntry]] = {}
    inside: dict[int, list[TraceEntry]] = {}
    for entry in trace.entries:
        if entry.message is not None:
            inside.setdefault(entry.message, []).append(entry)
        else:
            loose.setdefault(entry.after_message, []).append(entry)
    yield Text(f"session {trace.session_id}", style="bold"), 0
    for entry in loose.get(None, []):
        yield entry_text(entry), 0
    for index, message in enumerate(trace.by_message):
        yield Text(""), 0
        yield from _message_block(index + 1, message, trace, inside.get(index, []))
        if loose.get(index):
            yield Text(""), 0
        for entry in loose.get(index, []):
            yield entry_text(entry), 0


def footer_lines(trace: Trace) -> list[Text]:
    """Counts that add up to the RunResults: messages by status, turns, LLM attempts,
    tokens (sub-agents' included)."""
    usage = trace.usage
    statuses = [m.status for m in trace.by_message if m.status is not None]
    counts = [f"{statuses.count('completed')} completed", f"{statuses.count('failed')} failed"]
    counts += [
        f"{statuses.count(s)} {s.replace('_', ' ')}"
        for s in ("cancelled", "awaiting_approval")
        if s in statuses
    ]
    attempts = sum(a.attempts for t in trace.turns for a in t.attempts)
    tokens = f"{usage.input_tokens} in / {usage.output_tokens} out"
    if trace.sub_agent_usage.total_tokens:
        tokens += f"; {trace.sub_agent_usage.total_tokens} of them by sub-agents"
    if trace.store_read:
        stored = f"{trace.messages} stored ({trace.user_messages} from the user)"
    else:
        stored = "transcript store not read (--no-store): texts and store-only results unknown"
    lines = [
        Text(
            f"messages: {len(trace.by_message)} ({', '.join(counts)}) · turns: "
            f"{len(trace.turns)} · LLM attempts: {attempts} · tokens: {usage.total_tokens} "
            f"({tokens})"
        ),
        Text(f"transcript: {stored}"),
        Text(
            "runs: "
            + ", ".join(
                f"#{r.run_index} {r.run_id[:8]} ({r.event_count} events, {r.history_bytes} B)"
                for r in trace.runs
            )
        ),
    ]
    return lines


def trace_view(trace: Trace) -> Group:
    """The trace as one renderable: the message blocks, then the counts."""
    body: list[RenderableType] = [_indented(text, level) for text, level in trace_lines(trace)]
    return Group(*body, Text(""), *footer_lines(trace))


def print_trace(trace: Trace, console: Console | None = None) -> None:
    """The trace, then the Web UI link on a line of its own that is never broken (a
    terminal wraps it, and it stays one link to click or copy)."""
    console = console or Console()
    console.print(trace_view(trace), highlight=False)
    if trace.ui_url:
        link = Text(f"Web UI: {trace.ui_url}", style=f"link {trace.ui_url}")
        console.print(link, soft_wrap=True, highlight=False)
