"""``durable-loop chat [SESSION]``: an interactive terminal session.

Each message is an Update; while it is in flight the command polls the ``transcript_tail``
and ``proposals`` Queries, so tool calls show as they happen and a proposal can be
approved or rejected inline (also when the session waits for the decision). Ctrl-C
while a message runs cancels that message (the session stays; Ctrl-C at the prompt ends
the chat). Reads plain lines from stdin, so it works under a terminal, tmux, or with input
piped in.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.codes import CliCode
from durable_loop.cli.commands.options import Address, ApiKey, Namespace, TaskQueue
from durable_loop.cli.commands.send import SETTINGS_PANEL
from durable_loop.cli.output_schema import OutputSchemaFile, load_output_schema
from durable_loop.core.errors import ErrorCode
from durable_loop.core.visible_text import visible, visible_json

if TYPE_CHECKING:
    from pydantic import JsonValue

    from durable_loop.client.sessions import SessionClient
    from durable_loop.core.approvals import PendingToolCall
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import RunResult, TailEntry
    from durable_loop.core.proposals import PendingProposal, Verdict
    from durable_loop.core.typed_output import OutputSchema

HELP = "type a message, or /proposals, /approve ID [comment], /reject ID [comment], /status, /quit"


def chat(
    session_id: Annotated[
        str | None, typer.Argument(help="Session id; default: a new session (needs --model).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model name.", rich_help_panel=SETTINGS_PANEL)
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="OpenAI-compatible base URL.", rich_help_panel=SETTINGS_PANEL
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            help="Variable holding the provider key in the WORKER's environment.",
            rich_help_panel=SETTINGS_PANEL,
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="Provider adapter.", rich_help_panel=SETTINGS_PANEL),
    ] = None,
    system: Annotated[
        str | None,
        typer.Option("--system", help="System prompt.", rich_help_panel=SETTINGS_PANEL),
    ] = None,
    settings_file: Annotated[
        Path | None,
        typer.Option("--settings", help="SessionSettings file.", rich_help_panel=SETTINGS_PANEL),
    ] = None,
    approver: Annotated[
        str | None,
        typer.Option("--as", help="Who approves inline (recorded). Default: your user name."),
    ] = None,
    poll: Annotated[
        float, typer.Option("--poll", help="Seconds between progress polls.", min=0.05)
    ] = 0.3,
    output_schema_file: OutputSchemaFile = None,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    task_queue: TaskQueue = None,
) -> None:
    """Chat with a session: tool calls show as they happen; approve or reject inline."""
    import asyncio
    import getpass
    import uuid

    from durable_loop.cli.commands.send import load_session_settings
    from durable_loop.cli.errors import CliError
    from durable_loop.cli.tracing import client_tracing

    starting = model is not None or settings_file is not None
    settings = (
        load_session_settings(
            settings_file,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            provider=provider,
            system=system,
        )
        if starting
        else None
    )
    if session_id is None and settings is None:
        raise CliError(CliCode.NO_SESSION, "name a SESSION to resume, or pass --model to start one")
    chat_loop = ChatLoop(
        session_id or f"chat-{uuid.uuid4().hex[:8]}",
        settings,
        approver=approver or getpass.getuser(),
        poll_s=poll,
        output_schema=load_output_schema(output_schema_file),
    )
    with client_tracing():
        asyncio.run(
            chat_loop.run(
                {"address": address, "namespace": namespace, "api_key": api_key}, task_queue
            )
        )


class ChatLoop:
    def __init__(
        self,
        session_id: str,
        settings: SessionSettings | None,
        *,
        approver: str,
        poll_s: float,
        output_schema: OutputSchema | None = None,
    ) -> None:
        self.session_id = session_id
        self.output_schema = output_schema
        """Every message of this chat asks for an answer valid against it."""
        self.settings = settings
        self.approver = approver
        self.poll_s = poll_s
        self.shown_seq = -1
        self.prompted: set[str] = set()

    async def run(self, temporal: dict[str, object], task_queue: str | None) -> None:
        from durable_loop.client.connect import connect
        from durable_loop.client.sessions import SessionClient
        from durable_loop.core.settings_digest import not_applied_note
        from durable_loop.worker.settings import WorkerSettings

        worker_settings = WorkerSettings.load(temporal=temporal, task_queue=task_queue)
        client = await connect(worker_settings.temporal)
        sessions = SessionClient(client, task_queue=worker_settings.task_queue)
        if self.settings is not None:
            outcome = await sessions.start_or_join(self.session_id, self.settings)
            if outcome.settings_not_applied:
                say(f"note: {not_applied_note(outcome.settings_not_applied)}")
        status = await self._known(sessions)
        self.shown_seq = status.next_seq - 1
        say(f"session {self.session_id} · model {status.model} · approver {self.approver}")
        say(HELP)
        while True:
            line = await read_line("you> ")
            if line is None or line.strip() in {"/quit", "/exit"}:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                await self._command(sessions, text)
            else:
                await self._turn(sessions, text)
        say("bye")

    async def _known(self, sessions: SessionClient):  # type: ignore[no-untyped-def]
        from temporalio.service import RPCError, RPCStatusCode

        from durable_loop.cli.errors import CliError

        try:
            return await sessions.status(self.session_id)
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                raise CliError(
                    ErrorCode.SESSION_NOT_FOUND,
                    f"no session {self.session_id!r}: pass --model to start it",
                ) from None
            raise

    # ------------------------------------------------------------------ a turn

    async def _turn(self, sessions: SessionClient, text: str) -> None:
        import asyncio

        from temporalio.client import WorkflowUpdateFailedError

        from durable_loop.client.update_retry import new_message_id

        message_id = new_message_id()
        task = asyncio.ensure_future(
            sessions.send(
                self.session_id, text, message_id=message_id, output_schema=self.output_schema
            )
        )
        interrupted = asyncio.Event()
        cancelling = False
        with on_ctrl_c(interrupted.set):
            while not task.done():
                await asyncio.wait({task}, timeout=self.poll_s)
                if interrupted.is_set() and not cancelling:
                    cancelling = True
                    say("  · cancelling this message (the session stays)")
                    await sessions.post_cancel(self.session_id, message_id, reason="Ctrl-C")
                await self._progress(sessions)
                await self._offer_decisions(sessions)
        try:
            result = task.result()
        except WorkflowUpdateFailedError as err:
            say(f"refused: {getattr(err.cause, 'message', err)}")
            return
        await self._progress(sessions)
        self._reply(result)
        if result.status == "awaiting_approval" and await self._offer_tool_calls(sessions, result):
            await self._turn_result(sessions, result.message_id)
        await self._offer_decisions(sessions)

    async def _turn_result(self, sessions: SessionClient, message_id: str) -> None:
        import asyncio

        task = asyncio.ensure_future(sessions.message_result(self.session_id, message_id))
        while not task.done():
            await asyncio.wait({task}, timeout=self.poll_s)
            await self._progress(sessions)
        self._reply(task.result())

    # ------------------------------------------------------------------ tool calls

    async def _offer_tool_calls(self, sessions: SessionClient, result: RunResult) -> bool:
        """Ask about each held call; True when all were decided (the message resumes)."""
        decided_all = True
        for call in result.pending_approvals:
            say(f"tool call {visible(call.call_id)}: {visible(call.shown_tool)}")
            for line in visible_json(call.arguments, indent=2).split("\n"):
                say(f"  {line}")
            prompt = "run it? [a]pprove / [e]dit / [r]eject / [s]kip: "
            answer = (await read_line(prompt) or "s").strip().lower()[:1]
            arguments: dict[str, JsonValue] | None = None
            if answer == "e":
                typed = await read_line("arguments (one line of JSON): ") or ""
                try:
                    arguments = json.loads(typed)
                except ValueError as err:
                    say(f"  not JSON ({err}); skipped")
                    answer = "s"
                if not isinstance(arguments, dict):
                    say("  the arguments must be a JSON object; skipped")
                    answer = "s"
            if answer not in {"a", "e", "r"}:
                later = f"durable-loop approve {self.session_id} {call.call_id} --as ..."
                say(f"  skipped; later: {later}")
                decided_all = False
                continue
            comment = (await read_line("comment (optional): ") or "").strip() or None
            verdict: Verdict = "reject" if answer == "r" else "confirm"
            decided_all &= await self._decide_call(sessions, call, verdict, comment, arguments)
        return decided_all

    async def _decide_call(
        self,
        sessions: SessionClient,
        call: PendingToolCall,
        verdict: Verdict,
        comment: str | None,
        arguments: dict[str, JsonValue] | None,
    ) -> bool:
        from temporalio.client import WorkflowUpdateFailedError

        from durable_loop.core.proposals import decided_word

        decision = call.decision(verdict, self.approver, comment=comment, arguments=arguments)
        try:
            decided = await sessions.decide_tool_call(self.session_id, decision)
        except WorkflowUpdateFailedError as err:
            say(f"  refused: {getattr(err.cause, 'message', err)}")
            return False
        edited = f" (edited: {', '.join(decided.edited_fields)})" if decided.edited_fields else ""
        say(f"  {decided.call_id} {decided_word(decided.status)}{edited} by {decided.decided_by}")
        return True

    async def _progress(self, sessions: SessionClient) -> None:
        tail = await sessions.tail(self.session_id, limit=50)
        for entry in tail.entries:
            if entry.seq > self.shown_seq:
                self.shown_seq = entry.seq
                line = progress_line(entry)
                if line:
                    say(line)

    def _reply(self, result: RunResult) -> None:
        from durable_loop.cli.commands.send import summary_lines

        if result.reply:
            say(f"assistant> {result.reply}")
        for line in summary_lines(result):
            say(f"  {line.strip()}")

    # ------------------------------------------------------------------ proposals

    async def _offer_decisions(self, sessions: SessionClient) -> None:
        for proposal in await sessions.pending_proposals(self.session_id):
            if proposal.proposal_id in self.prompted:
                continue
            self.prompted.add(proposal.proposal_id)
            show_proposal(proposal)
            answer = (await read_line("approve? [a]pprove / [r]eject / [s]kip: ") or "s").strip()
            verdict = {
                "c": "confirm",
                "confirm": "confirm",
                "a": "confirm",
                "approve": "confirm",
                "r": "reject",
                "reject": "reject",
            }
            chosen = verdict.get(answer.lower())
            if chosen is None:
                say(f"  skipped; later: /approve {proposal.proposal_id} or /reject ...")
                continue
            comment = (await read_line("comment (optional): ") or "").strip() or None
            await self._decide(sessions, proposal.proposal_id, chosen, comment, proposal)

    async def _decide(
        self,
        sessions: SessionClient,
        proposal_id: str,
        verdict: str,
        comment: str | None,
        proposal: PendingProposal | None = None,
    ) -> None:
        from temporalio.client import WorkflowUpdateFailedError

        from durable_loop.client.proposals import ProposalNotPending

        fingerprint = proposal.fingerprint if proposal else None
        decide = sessions.confirm if verdict == "confirm" else sessions.reject
        try:
            result = await decide(
                self.session_id,
                proposal_id,
                self.approver,
                comment=comment,
                fingerprint=fingerprint,
            )
        except WorkflowUpdateFailedError as err:
            say(f"  refused: {getattr(err.cause, 'message', err)}")
            return
        except ProposalNotPending as err:
            say(f"  refused: {err.code}: {err}")
            return
        say(f"  {result.proposal_id} {result.describe()}")

    async def _command(self, sessions: SessionClient, text: str) -> None:
        name, _, rest = text.partition(" ")
        if name == "/proposals":
            listing = await sessions.proposals(self.session_id)
            if not listing.pending:
                say("no pending proposals")
            for proposal in listing.pending:
                show_proposal(proposal)
            for done in listing.decided:
                say(f"  {done.proposal_id} {done.describe()}")
        elif name in {"/confirm", "/approve", "/reject"}:
            proposal_id, _, comment = rest.strip().partition(" ")
            if not proposal_id:
                say(f"usage: {name} PROPOSAL_ID [comment]")
                return
            verdict = "reject" if name == "/reject" else "confirm"
            await self._decide(sessions, proposal_id, verdict, comment.strip() or None)
        elif name == "/status":
            status = await sessions.status(self.session_id)
            say(
                f"{status.state} · model {status.model} · {status.messages_done} message(s) · "
                f"{status.turns_total} turn(s) · {status.usage.total_tokens} tokens"
            )
        else:
            say(HELP)


def progress_line(entry: TailEntry) -> str | None:
    if entry.role == "assistant" and entry.tool_names:
        return f"  · calls {', '.join(entry.tool_names)}"
    if entry.role == "tool":
        name = entry.tool_names[0] if entry.tool_names else "tool"
        return f"  · {name} -> {entry.preview}"
    return None


def show_proposal(proposal: PendingProposal) -> None:
    say(f"proposal {proposal.proposal_id}: {proposal.summary or ', '.join(proposal.paths)}")
    for op in proposal.changes:
        value = f" = {json.dumps(op['value'], ensure_ascii=False)}" if "value" in op else ""
        source = f" from {op['from']}" if "from" in op else ""
        say(f"  {op['op']} {op['path']}{source}{value}")
    say(f"  expires {proposal.expires_at.isoformat(timespec='minutes')}")


@contextlib.contextmanager
def on_ctrl_c(handle: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C calls ``handle`` instead of interrupting the program, inside the block."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, handle)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread; Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)


def say(text: str) -> None:
    typer.echo(text)


async def read_line(prompt: str) -> str | None:
    """One line from stdin without blocking the event loop; None at end of input."""
    import asyncio
    import sys

    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line:
        sys.stdout.write("\n")
        return None
    if not sys.stdin.isatty():
        sys.stdout.write(line if line.endswith("\n") else line + "\n")  # echo piped input
    return line.rstrip("\n")
