"""``durable-loop result SESSION MESSAGE``: wait for a message's final result (once the
tool calls it holds are decided) and print it as ``send`` does: the answer on stdout, the
run summary on stderr, ``--json`` for the RunResult.

If nothing has come after a moment, stderr says what the message waits for (a person, a
worker), then each held call as a person decides it and the tool calls as they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.decide import AsJson, Session
from durable_loop.cli.commands.options import Address, ApiKey, Namespace

if TYPE_CHECKING:
    from temporalio.client import Client

    from durable_loop.core.results import RunResult, TailEntry

NOTICE_AFTER_S = 2.0
POLL_S = 1.0


def result(
    session_id: Session,
    message_id: Annotated[str, typer.Argument(help="The message id the reply was sent under.")],
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the result.")
    ] = 300,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Wait for the final result of message MESSAGE_ID of SESSION_ID (after its held calls
    are decided) and print the answer and a run summary; progress shows while it waits."""
    import asyncio

    from durable_loop.cli.commands.send import summary_lines
    from durable_loop.cli.output_schema import answer_of

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    final = asyncio.run(_result(session_id, message_id, timeout, temporal, quiet=as_json))
    if as_json:
        typer.echo(final.model_dump_json(indent=2))
    else:
        answer = answer_of(final)
        if answer is not None:
            typer.echo(answer)
        for line in summary_lines(final, session_id):
            typer.echo(line, err=True)
    if final.status == "failed":
        raise typer.Exit(1)


async def _result(
    session_id: str, message_id: str, timeout: float, temporal: dict[str, object], *, quiet: bool
) -> RunResult:
    import asyncio

    from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError

    from durable_loop.cli.codes import CliCode
    from durable_loop.cli.commands.session_rpc import known_error, temporal_client
    from durable_loop.cli.errors import CliError
    from durable_loop.client.late_reply import probe_wait

    client = await temporal_client(temporal)
    try:
        async with asyncio.timeout(timeout):
            return await _follow(client, session_id, message_id, quiet=quiet)
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        wait = await probe_wait(client, session_id, message_id)
        raise CliError(CliCode.NO_REPLY, f"no result within {timeout:g}s: {wait.text()}") from None
    except CliError:
        raise
    except Exception as err:
        raise known_error(err, session_id) from None


async def _follow(client: Client, session_id: str, message_id: str, *, quiet: bool) -> RunResult:
    """The result, with progress lines on stderr while it comes (none when ``quiet``): what
    the message waits for, each held call as a person decides it, tool calls as they run."""
    import asyncio

    from temporalio.service import RPCError

    from durable_loop.cli.commands.people_view import call_decided_line
    from durable_loop.client.late_reply import probe_wait
    from durable_loop.client.sessions import SessionClient

    sessions = SessionClient(client, search_attributes=False)
    call = asyncio.ensure_future(sessions.message_result(session_id, message_id))
    done, _ = await asyncio.wait({call}, timeout=NOTICE_AFTER_S)
    if done or quiet:
        return await call
    wait = await probe_wait(client, session_id, message_id)
    if wait.held_up:
        typer.echo(f"waiting: {wait.text()}", err=True)
    held = {c.call_id for c in wait.held}
    try:
        seen = (await sessions.status(session_id)).next_seq - 1
        while True:
            await asyncio.wait({call}, timeout=POLL_S)
            finished = call.done()  # once more after the end: nothing is left unsaid
            if held:
                for decided in (await sessions.tool_approvals(session_id)).decided:
                    if decided.call_id in held:
                        held.discard(decided.call_id)
                        typer.echo(f"  · {call_decided_line(decided, with_tool=True)}", err=True)
            for entry in (await sessions.tail(session_id, limit=100)).entries:
                if entry.seq > seen:
                    seen = entry.seq
                    line = progress_line(entry)
                    if line:
                        typer.echo(line, err=True)
            if finished:
                break
    except RPCError:
        pass  # progress is a courtesy: the result still comes
    return await call


def progress_line(entry: TailEntry) -> str | None:
    """A tool call or its result as it happens."""
    if entry.role == "assistant" and entry.tool_names:
        return f"  · calls {', '.join(entry.tool_names)}"
    if entry.role == "tool":
        return f"  · {entry.tool_names[0] if entry.tool_names else 'tool'} -> {entry.preview}"
    return None
