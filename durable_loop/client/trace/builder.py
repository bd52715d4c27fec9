"""Joining decoded history and stored messages into a per-turn :class:`Trace` (pure).

History is authoritative for what happened (which activity ran, its latency, usage and
outcome); the store fills in what history does not carry: refusals written by the final
``write_messages`` local activity, and results of runs whose history was not fetched.
"""

from __future__ import annotations

from collections.abc import Sequence

from durable_loop.client.trace.arguments import ARGS_CHARS, with_arguments
from durable_loop.client.trace.children import link_sub_agents, sub_agent_usage
from durable_loop.client.trace.entries import ToolCallDecisionEntry, TraceEntry
from durable_loop.client.trace.messages import message_rows
from durable_loop.client.trace.models import (
    AttemptRow,
    CallRow,
    DecodedRun,
    GateRun,
    LlmCall,
    MessageRow,
    RepairRun,
    RunInfo,
    ToolRun,
    Trace,
    TurnRow,
)
from durable_loop.client.trace.placement import Position, place_entries
from durable_loop.client.trace.replies import REPLY_CHARS, reply_of
from durable_loop.client.trace.tool_names import stored_names
from durable_loop.core.activity_contracts import AppendItem, ToolCallSummary
from durable_loop.core.contracts import RunResult
from durable_loop.core.conversation_gate import gate_choice
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.messages import StoredMessage, Usage
from durable_loop.core.outcome import preview
from durable_loop.core.reply_meta import ReusedResultMeta

USER_PREVIEW_CHARS = 200
Tried = list[tuple[int, list[LlmCall]]]
"""Per turn in transcript order: the run index and the LLM calls that tried the turn."""


class _Index:
    """Lookups shared by every turn: executed tools, workflow-decided appends, store rows."""

    def __init__(self, runs: Sequence[DecodedRun], stored: Sequence[StoredMessage]) -> None:
        self.tool_runs: dict[tuple[int, str], ToolRun] = {
            (t.input.assistant_seq, t.input.call_id): t for r in runs for t in r.tool_runs
        }
        self.appends: dict[int, AppendItem] = {
            a.seq: a for r in runs for c in r.llm_calls for a in c.input.appends
        }
        self.stored: dict[int, StoredMessage] = {m.seq: m for m in stored}
        self.original_names = stored_names(stored)
        for run in runs:
            self.original_names.update(run.original_names)
        self.gates: dict[int, GateRun] = {g.input.turn + 1: g for r in runs for g in r.gates}
        """Session turn -> the gate that ran before it."""
        self.repairs: dict[int, list[RepairRun]] = {}
        for run in runs:
            for repair in run.repairs:
                self.repairs.setdefault(repair.input.assistant_seq, []).append(repair)

    def repair_rows(self, assistant_seq: int, until_seq: int) -> list[CallRow]:
        """The calls named recoveries re-issued for the turn stored at ``assistant_seq``."""
        rows = []
        for repair in self.repairs.get(assistant_seq, []):
            out = repair.output
            if out is None:
                continue
            for call in out.tool_calls:
                row = self.call_row(call, out.assistant_seq, until_seq)
                rows.append(row.model_copy(update={"repair": repair.input.kind}))
        return rows

    def call_row(self, call: ToolCallSummary, assistant_seq: int, until_seq: int) -> CallRow:
        row = CallRow(
            call_id=call.id,
            name=call.name,
            original_name=self.original_names.get(call.name),
            ok=None,
        )
        ran = self.tool_runs.get((assistant_seq, call.id))
        if ran is not None and ran.output is not None:
            out = ran.output
            return row.model_copy(
                update={
                    "ok": out.ok,
                    "error_codes": list(out.error_codes),
                    "executed": out.executed,
                    "duration_ms": out.duration_ms
                    if out.duration_us is None
                    else out.duration_us / 1000,
                    "result_seq": out.result_seq,
                    "source": "history",
                }
            )
        window = range(assistant_seq + 1, until_seq)
        for seq in window:
            item = self.appends.get(seq)
            if item is not None and _answers(item, call.id):
                return self._from_append(row, item, executed=ran is not None)
        for seq in window:
            stored = self.stored.get(seq)
            if stored is not None and stored.message.tool_call_id == call.id:
                return _with_envelope(
                    row,
                    stored.message.envelope,
                    seq,
                    source="store",
                    executed=ran is not None,
                    reused=stored.meta_as(ReusedResultMeta).reused_from is not None,
                )
        if ran is not None and ran.failure is not None:
            return row.model_copy(
                update={"ok": False, "error_codes": [ran.failure.code], "executed": True}
            )
        return row

    def _from_append(self, row: CallRow, item: AppendItem, *, executed: bool) -> CallRow:
        if item.copy_result_from is not None:
            source = self.stored.get(item.copy_result_from)
            envelope = source.message.envelope if source else None
            return _with_envelope(
                row, envelope, item.seq, source="history", executed=False, reused=True
            )
        envelope = item.message.envelope if item.message else None
        return _with_envelope(row, envelope, item.seq, source="history", executed=executed)


def _answers(item: AppendItem, call_id: str) -> bool:
    if item.message is not None:
        return item.message.role == "tool" and item.message.tool_call_id == call_id
    return item.tool_call_id == call_id


def _with_envelope(
    row: CallRow,
    envelope: Envelope | None,
    seq: int,
    *,
    source: str,
    executed: bool,
    reused: bool = False,
) -> CallRow:
    return row.model_copy(
        update={
            "ok": envelope.ok if envelope else None,
            "error_codes": [e.code for e in envelope.errors] if envelope else [],
            "executed": executed,
            "reused": reused,
            "result_seq": seq,
            "source": source,
        }
    )


def _user_message(call: LlmCall) -> tuple[int, str] | None:
    """The (seq, preview) of the user message this call's appends carry, if any."""
    for item in call.input.appends:
        message = item.message
        if message is not None and message.from_person:
            return item.seq, preview(message.content, USER_PREVIEW_CHARS)
    return None


def _attempt(call: LlmCall) -> AttemptRow:
    ended = call.output is not None or call.failure is not None
    return AttemptRow(
        model=call.input.endpoint.model,
        attempts=call.attempt,
        ok=call.output is not None if ended else None,
        elapsed_ms=call.elapsed_ms,
        error=call.failure,
    )


def _attempts(tries: Sequence[LlmCall]) -> list[AttemptRow]:
    """Each model of the chain that this turn reached, in order: the models the circuit
    breaker skipped (0 attempts, CIRCUIT_OPEN) and the ones that ran."""
    rows: list[AttemptRow] = []
    for call in tries:
        listed = {r.model for r in rows}
        rows += [
            AttemptRow(
                model=model,
                attempts=0,
                ok=False,
                error=CodedError(
                    code=ErrorCode.CIRCUIT_OPEN, message="skipped: its circuit was open"
                ),
            )
            for model in call.input.circuit_open
            if model not in listed
        ]
        rows.append(_attempt(call))
    return rows


def _turn_row(tries: Sequence[LlmCall], run_index: int, index: _Index, until_seq: int) -> TurnRow:
    """One turn from the LLM calls that tried it (the fallback chain, in order)."""
    call = tries[-1]
    inp, out = call.input, call.output
    user = next((u for t in tries if (u := _user_message(t)) is not None), None)
    row = TurnRow(
        turn=inp.turn,
        run_index=run_index,
        assistant_seq=inp.assistant_seq,
        model=inp.endpoint.model,
        error=call.failure,
        attempt=call.attempt,
        pending=out is None and call.failure is None,
        user_text=user[1] if user else None,
        attempts=_attempts(tries),
        gate=_gate_said(index.gates.get(inp.turn)),
    )
    if out is None:
        return row
    reported = out.usage.input_tokens or out.usage.output_tokens
    return row.model_copy(
        update={
            "model": out.model or inp.endpoint.model,
            "latency_ms": out.latency_ms,
            "input_tokens": out.usage.input_tokens if reported else None,
            "output_tokens": out.usage.output_tokens if reported else None,
            "plan_fingerprint": out.plan_fingerprint,
            "finish_reason": out.finish_reason,
            "cached": out.cached,
            "warnings": list(out.warnings),
            "calls": [
                *(index.call_row(c, inp.assistant_seq, until_seq) for c in out.tool_calls),
                *index.repair_rows(inp.assistant_seq, until_seq),
            ],
        }
    )


def _gate_said(gate: GateRun | None) -> str | None:
    if gate is None:
        return None
    if gate.output is None:
        return f"failed ({gate.failure.code}), tools offered" if gate.failure else "pending"
    if gate.output.conversation:
        return "none: the message went without tools"
    return f"{gate_choice(gate.output.answer) or repr(gate.output.answer)}: tools offered"


def _turns_tried(runs: Sequence[DecodedRun]) -> Tried:
    """(run index, the calls that tried it) per turn, in transcript order."""
    calls = sorted(
        ((r.run_index, c) for r in runs for c in r.llm_calls),
        key=lambda pair: (pair[1].input.assistant_seq, pair[0], pair[1].scheduled_event_id),
    )
    grouped: list[tuple[int, list[LlmCall]]] = []
    for run_index, call in calls:
        if grouped and grouped[-1][1][-1].input.turn == call.input.turn:
            grouped[-1][1].append(call)
        else:
            grouped.append((run_index, [call]))
    return grouped


def build_trace(
    session_id: str,
    workflow_id: str,
    runs: Sequence[DecodedRun],
    stored: Sequence[StoredMessage] | None,
    *,
    namespace: str = "default",
    ui_url: str | None = None,
    args_chars: int | None = ARGS_CHARS,
    reply_chars: int | None = REPLY_CHARS,
) -> Trace:
    """``runs`` oldest first; ``stored`` is the session's transcript, None when the store
    was not read.
    ``args_chars`` / ``reply_chars``: how much of each call's arguments and of each reply
    to show (None: all of it)."""
    rows = list(stored or [])
    index = _Index(runs, rows)
    tried = _turns_tried(runs)
    turns = link_sub_agents(_turn_rows(tried, index), session_id, runs)
    children = sub_agent_usage(runs)
    results, answered_at = _message_results(runs)
    by_message = _by_message(turns, tried, rows, results, index, reply_chars)
    turn_at = {tries[0].input.turn: (r, tries[0].scheduled_event_id) for r, tries in tried}
    entries = [_own(e, session_id, index.original_names) for run in runs for e in run.entries]
    trace = Trace(
        session_id=session_id,
        workflow_id=workflow_id,
        namespace=namespace,
        runs=[_run_info(r) for r in runs],
        turns=turns,
        messages=len(rows),
        user_messages=_user_count(rows, turns),
        message_results=list(results.values()),
        by_message=by_message,
        entries=place_entries(entries, by_message, turn_at, answered_at),
        store_read=stored is not None,
        usage=_usage(runs, tried, children),
        sub_agent_usage=children,
        ui_url=f"{ui_url}/namespaces/{namespace}/workflows/{workflow_id}" if ui_url else None,
    )
    return with_arguments(trace, rows, args_chars)


def _turn_rows(tried: Tried, index: _Index) -> list[TurnRow]:
    """A row per turn; a turn's calls are looked for up to the next turn's assistant seq
    (the last turn: up to the end of what is known)."""
    last_seq = max([*index.stored, *index.appends], default=0)
    turns: list[TurnRow] = []
    for position, (run_index, tries) in enumerate(tried):
        if position + 1 < len(tried):
            until = tried[position + 1][1][0].input.assistant_seq
        else:
            until = max(last_seq, tries[-1].input.assistant_seq + _call_count(tries[-1])) + 1
        turns.append(_turn_row(tries, run_index, index, until))
    return turns


def _usage(runs: Sequence[DecodedRun], tried: Tried, children: Usage) -> Usage:
    """Tokens of every turn's last try, every recovery's re-issue and gate, and the
    sub-agents."""
    usage = sum((t[-1].output.usage for _, t in tried if t[-1].output), children)
    repaired = (r.output.usage for run in runs for r in run.repairs if r.output is not None)
    gated = (g.output.usage for run in runs for g in run.gates if g.output is not None)
    return sum(gated, sum(repaired, usage))


def _message_results(
    runs: Sequence[DecodedRun],
) -> tuple[dict[str, RunResult], dict[str, Position]]:
    """Each message's result (sub-agents' included) and where in history it was answered
    first."""
    results: dict[str, RunResult] = {}
    answered_at: dict[str, Position] = {}
    for run in runs:
        results.update({r.message_id: r for r in [*run.results, *run.child_results]})
        for message_id, event_id in run.result_events.items():
            answered_at.setdefault(message_id, (run.run_index, event_id))
    return results, answered_at


def _user_stored(rows: Sequence[StoredMessage]) -> list[StoredMessage]:
    return [m for m in rows if m.message.from_person]


def _user_count(rows: Sequence[StoredMessage], turns: Sequence[TurnRow]) -> int:
    """Users' messages in the store; without the store, the turns that carry one."""
    if rows:
        return len(_user_stored(rows))
    return sum(1 for t in turns if t.user_text)


def _by_message(
    turns: list[TurnRow],
    tried: Tried,
    rows: Sequence[StoredMessage],
    results: dict[str, RunResult],
    index: _Index,
    reply_chars: int | None,
) -> list[MessageRow]:
    """The turns grouped by the user's message they answer, each with its reply and
    usage once its result is known."""
    users = {m.seq: preview(m.message.content, USER_PREVIEW_CHARS) for m in _user_stored(rows)}
    for tries in (t for _, t in tried):
        if (user := _user_message(tries[0])) is not None:
            users.setdefault(*user)
    return [
        row.model_copy(
            update={
                "reply": reply_of(results[row.message_id], index.stored, reply_chars),
                "usage": results[row.message_id].usage,
            }
        )
        if row.message_id in results
        else row
        for row in message_rows(turns, users, list(results.values()))
    ]


def _run_info(run: DecodedRun) -> RunInfo:
    return RunInfo(
        run_index=run.run_index,
        run_id=run.run_id,
        event_count=run.event_count,
        history_bytes=run.history_bytes,
        turns=len({c.input.turn for c in run.llm_calls}),
    )


def _own(entry: TraceEntry, session_id: str, original_names: dict[str, str]) -> TraceEntry:
    """A decision names a sub-agent's session only when it was one's call, and the tool's
    own name beside a mapped one."""
    if not isinstance(entry, ToolCallDecisionEntry):
        return entry
    update: dict[str, object] = {"original_name": original_names.get(entry.tool)}
    if entry.sub_agent_session == session_id:
        update["sub_agent_session"] = None
    return entry.model_copy(update=update)


def _call_count(call: LlmCall) -> int:
    return len(call.output.tool_calls) if call.output else 0
