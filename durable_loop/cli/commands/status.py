"""``durable-loop status SESSION``: one session's state (the ``status`` Query) and what in
it waits for a person (the ``tool_approvals`` and ``proposals`` Queries), asked at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from durable_loop.cli.commands.decide import AsJson, Session
from durable_loop.cli.commands.options import Address, ApiKey, Namespace

if TYPE_CHECKING:
    from durable_loop.client.waiting import SessionWaiting
    from durable_loop.core.results import SessionStatus


def status(
    session_id: Session,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Show session SESSION_ID: its state and model, messages done and queued, turns,
    tokens, budget, its last message's outcome, and what waits for a person."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    state, waiting = asyncio.run(_load(session_id, temporal))
    if as_json:
        typer.echo(_json(state, waiting))
        return
    for line in status_lines(state, waiting):
        typer.echo(line)


def status_lines(state: SessionStatus, waiting: SessionWaiting) -> list[str]:
    from durable_loop.cli.commands.people_view import decide_hint, waiting_lines

    usage = state.usage
    lines = [
        f"session {state.session_id}: {state.state} · model {state.model}",
        f"  messages {state.messages_done} done, {state.queued_messages} queued · turns "
        f"{state.turns_total} · tokens {usage.total_tokens} ({usage.input_tokens} in / "
        f"{usage.output_tokens} out)",
    ]
    if state.budget is not None:
        tokens = state.budget.max_session_tokens
        cap = "no token limit" if tokens is None else f"{tokens} tokens per session"
        lines.append(f"  budget: {cap}, {state.budget.max_turns} turns per message")
    last = state.last_result
    if last is not None:
        error = f" · {last.error.code}" if last.error is not None else ""
        lines.append(f"  last message {last.message_id}: {last.status}{error}")
    if not waiting.count:
        lines.append("nothing waits for a person")
        return lines
    lines.append(f"waiting for a person: {waiting.count}")
    lines += waiting_lines(waiting)
    lines.append(decide_hint(state.session_id))
    return lines


def _json(state: SessionStatus, waiting: SessionWaiting) -> str:
    import json

    both = {"status": state.model_dump(mode="json"), "waiting": waiting.model_dump(mode="json")}
    return json.dumps(both, indent=2, ensure_ascii=False)


async def _load(
    session_id: str, temporal: dict[str, object]
) -> tuple[SessionStatus, SessionWaiting]:
    import asyncio

    from durable_loop.cli.commands.session_rpc import known_failure, temporal_client
    from durable_loop.client.waiting import waiting_in
    from durable_loop.core import names
    from durable_loop.core.errors import ErrorCode
    from durable_loop.core.results import SessionStatus

    client = await temporal_client(temporal)
    handle = client.get_workflow_handle(names.session_workflow_id(session_id))
    try:
        return await asyncio.gather(
            handle.query(names.QUERY_STATUS, result_type=SessionStatus),
            waiting_in(client, session_id),
        )
    except Exception as err:
        raise known_failure(err, session_id, ErrorCode.QUERY_FAILED) from None
