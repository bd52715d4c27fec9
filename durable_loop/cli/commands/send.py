"""``durable-loop send``: send one message to a session (starting it if asked) and print
the reply and the run summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.codes import CliCode
from durable_loop.cli.commands.options import (
    Address,
    ApiKey,
    Namespace,
    TaskQueue,
    temporal_flags,
)
from durable_loop.cli.output_schema import (
    OutputSchemaFile,
    answer_of,
    invalid_answer_line,
    load_output_schema,
)
from durable_loop.core.errors import ErrorCode
from durable_loop.core.visible_text import visible

if TYPE_CHECKING:
    import asyncio

    from temporalio.client import Client

    from durable_loop.cli.errors import CliError
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.contracts import RunResult
    from durable_loop.core.typed_output import OutputSchema

SETTINGS_PANEL = "Session settings (used when the session is started)"
NOTICE_AFTER_S = 2.0
"""A reply not there by then: say what the message waits for, if a person holds it up."""
CONFIG_CODES = {ErrorCode.CONFIG_ERROR, ErrorCode.PROVIDER_AUTH}


Start = Annotated[
    bool, typer.Option("--start", help="Start the session if it does not exist (needs a model).")
]
Model = Annotated[
    str | None, typer.Option("--model", help="Model name.", rich_help_panel=SETTINGS_PANEL)
]
BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible base URL (without /v1).",
        rich_help_panel=SETTINGS_PANEL,
    ),
]
ApiKeyEnv = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Name of the variable holding the provider API key in the WORKER's "
        "environment (the key itself never enters history).",
        rich_help_panel=SETTINGS_PANEL,
    ),
]
Provider = Annotated[
    str | None,
    typer.Option("--provider", help="Provider adapter.", rich_help_panel=SETTINGS_PANEL),
]
System = Annotated[
    str | None, typer.Option("--system", help="System prompt.", rich_help_panel=SETTINGS_PANEL)
]
SettingsFile = Annotated[
    Path | None,
    typer.Option(
        "--settings",
        help="SessionSettings as a JSON or TOML file; flags override its llm fields.",
        rich_help_panel=SETTINGS_PANEL,
    ),
]
MessageId = Annotated[
    str | None, typer.Option("--message-id", help="Idempotency key for this message.")
]
Interrupt = Annotated[
    bool,
    typer.Option("--interrupt", help="Cancel the session's running message and run this one next."),
]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds to wait for the reply.")]


def load_session_settings(
    path: Path | None,
    *,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    provider: str | None,
    system: str | None,
) -> SessionSettings:
    """Settings from a JSON or TOML file, with flags overriding the ``llm`` fields."""
    import json
    import tomllib

    from durable_loop.core.config import SessionSettings
    from durable_loop.core.errors import ConfigError
    from durable_loop.core.providers import get_adapter
    from durable_loop.core.recoveries import legacy as legacy_recoveries
    from durable_loop.core.runtime_groups import MOVED

    data: dict[str, object] = {}
    if path is not None:
        text = path.read_text()
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as err:
            kind = "TOML" if path.suffix == ".toml" else "JSON"
            raise ConfigError(f"{path}: malformed {kind}: {err}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected an object with an 'llm' table")
        for note in legacy_recoveries.notes(data.get("runtime"), MOVED):
            typer.echo(note, err=True)
    llm = dict(data.get("llm") or {})  # type: ignore[call-overload]
    flags = {
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "provider": provider,
    }
    llm.update({k: v for k, v in flags.items() if v is not None})
    if "model" not in llm:
        raise ConfigError("no model given: pass --model NAME or a --settings file with llm.model")
    data["llm"] = llm
    if system is not None:
        data["system_prompt"] = system
    settings = SessionSettings.model_validate(data)
    get_adapter(settings.llm.provider)
    return settings


def summary_lines(result: RunResult, session_id: str | None = None) -> list[str]:
    """The run summary under a reply; with ``session_id``, a held call of a sub-agent is
    named with the sub-agent's session."""
    usage = result.usage
    lines = [
        f"status {result.status} · {result.turns} turn(s){_session_turns(result)} · "
        f"tokens {usage.input_tokens} in / {usage.output_tokens} out · "
        f"message {result.message_id}"
    ]
    for call in result.tool_calls:
        verdict = "ok" if call.ok else ",".join(call.error_codes) or "failed"
        how = " (reused)" if call.reused else "" if call.executed else " (not run)"
        lines.append(f"  session turn {call.turn}: {call.name} [{call.call_id}] {verdict}{how}")
    for held in result.pending_approvals:
        child = session_id is not None and held.session_id != session_id
        where = f" in sub-agent session {held.session_id}" if child else ""
        asked = visible(session_id or held.session_id)
        lines.append(
            f"  waits for approval: {visible(held.shown_tool)} [{visible(held.call_id)}]{where} "
            f"(durable-loop approve {asked} {visible(held.call_id)} --as NAME)"
        )
    if result.output is not None:
        lines.append(f"  output {json.dumps(result.output, ensure_ascii=False)}")
    invalid = invalid_answer_line(result)
    if invalid is not None:
        lines.append(invalid)
    if result.error is not None:
        lines.append(f"  error {result.error.code}: {result.error.message}")
    if result.settings_not_applied:
        from durable_loop.core.settings_digest import not_applied_note

        lines.append(f"  note: {not_applied_note(result.settings_not_applied)}")
    lines += [f"  warning: {warning}" for warning in result.warnings]
    return lines


def _session_turns(result: RunResult) -> str:
    """Where this message's turns sit in the session's numbering (what tool lines use)."""
    numbers = result.session_turns
    if not numbers:
        return ""
    if len(numbers) == 1:
        return f" (session turn {numbers[0]})"
    return f" (session turns {numbers[0]}-{numbers[-1]})"


def send(
    session_id: Annotated[str, typer.Argument(help="Session id (workflow id session-<ID>).")],
    text: Annotated[str, typer.Argument(help="The user message.")],
    start: Start = False,
    model: Model = None,
    base_url: BaseUrl = None,
    api_key_env: ApiKeyEnv = None,
    provider: Provider = None,
    system: System = None,
    settings_file: SettingsFile = None,
    message_id: MessageId = None,
    interrupt: Interrupt = False,
    timeout: Timeout = 300,
    as_json: Annotated[bool, typer.Option("--json", help="Print the RunResult as JSON.")] = False,
    output_schema_file: OutputSchemaFile = None,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    task_queue: TaskQueue = None,
) -> None:
    """Send TEXT to session SESSION_ID and print the reply and a run summary."""
    import asyncio

    from durable_loop.cli.tracing import client_tracing

    output_schema = load_output_schema(output_schema_file)
    settings = None
    if start or model is not None or settings_file is not None:
        settings = load_session_settings(
            settings_file,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            provider=provider,
            system=system,
        )
    with client_tracing():
        result = asyncio.run(
            _send(
                session_id,
                text,
                settings,
                message_id=message_id,
                interrupt=interrupt,
                output_schema=output_schema,
                timeout=timeout,
                temporal=temporal_flags(address, namespace, api_key),
                task_queue=task_queue,
            )
        )
    _print_result(result, session_id, as_json)


def _print_result(result: RunResult, session_id: str, as_json: bool) -> None:
    """The reply on stdout and the summary on stderr (or the RunResult as JSON); a
    configuration error is a coded CLI error, a failed run exits 1."""
    from durable_loop.cli.errors import CliError

    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    if result.error is not None and result.error.code in CONFIG_CODES:
        raise CliError(ErrorCode(result.error.code), result.error.message)
    if not as_json:
        answer = answer_of(result)
        if answer is not None:
            typer.echo(answer)
        for line in summary_lines(result, session_id):
            typer.echo(line, err=True)
    if result.status == "failed":
        raise typer.Exit(1)


async def _send(
    session_id: str,
    text: str,
    settings: SessionSettings | None,
    *,
    message_id: str | None,
    interrupt: bool = False,
    output_schema: OutputSchema | None = None,
    timeout: float,
    temporal: dict[str, object],
    task_queue: str | None,
) -> RunResult:
    import asyncio

    from temporalio.client import WorkflowUpdateRPCTimeoutOrCancelledError

    from durable_loop.cli.errors import CliError
    from durable_loop.client.connect import connect
    from durable_loop.client.late_reply import probe_wait
    from durable_loop.client.sessions import SessionClient
    from durable_loop.client.update_retry import new_message_id
    from durable_loop.worker.settings import WorkerSettings

    asyncio.get_running_loop().set_exception_handler(_quiet_cancellations)
    worker_settings = WorkerSettings.load(temporal=temporal, task_queue=task_queue)
    client = await connect(worker_settings.temporal)
    sessions = SessionClient(client, task_queue=worker_settings.task_queue)
    message_id = message_id or new_message_id()  # named when the reply is late
    try:
        if settings is None:
            call = sessions.send(
                session_id,
                text,
                message_id=message_id,
                interrupt=interrupt,
                output_schema=output_schema,
            )
        else:
            call = sessions.start_and_send(
                session_id,
                settings,
                text,
                message_id=message_id,
                interrupt=interrupt,
                output_schema=output_schema,
            )
        async with asyncio.timeout(timeout):
            reply = asyncio.ensure_future(call)
            return await _reply_or_notice(reply, client, session_id, message_id, timeout)
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        wait = await probe_wait(client, session_id, message_id)
        raise CliError(CliCode.NO_REPLY, f"no reply within {timeout:g}s: {wait.text()}") from None
    except Exception as err:
        refused = _refusal(err, session_id)
        if refused is None:
            raise
        raise refused from None


def _refusal(err: Exception, session_id: str) -> CliError | None:
    """A refused Update or a missing session as a coded CLI error (None: neither)."""
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.errors import CliError
    from durable_loop.client.refusals import refusal_of

    if isinstance(err, WorkflowUpdateFailedError):
        refused = refusal_of(err)
        return CliError(refused.code or ErrorCode.UPDATE_REFUSED, refused.message)
    if not isinstance(err, RPCError) or err.status != RPCStatusCode.NOT_FOUND:
        return None
    if "workflow" in err.message.lower():
        return CliError(
            ErrorCode.SESSION_NOT_FOUND,
            f"no running session {session_id!r}: pass --start with --model to start it",
        )
    return None


async def _reply_or_notice(
    reply: asyncio.Future[RunResult],
    client: Client,
    session_id: str,
    message_id: str,
    timeout: float,
) -> RunResult:
    """The reply; if it is not there after ``NOTICE_AFTER_S``, say on stderr (once) what
    the message waits for when a person or a missing worker holds it up."""
    import asyncio

    from durable_loop.client.late_reply import probe_wait

    try:
        done, _ = await asyncio.wait({reply}, timeout=NOTICE_AFTER_S)
        if not done:
            wait = await probe_wait(client, session_id, message_id)
            if wait.held_up:
                until = f"still waiting up to {timeout:g}s for the reply (Ctrl-C stops waiting)"
                typer.echo(f"waiting: {wait.summary()}; {until}", err=True)
        return await reply
    finally:
        if not reply.done():
            reply.cancel()
            # the SDK turns the cancel into its own exception: read it, or it is logged
            reply.add_done_callback(lambda done: done.cancelled() or done.exception())


def _quiet_cancellations(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """After a timeout the SDK leaves a cancelled RPC future behind; do not print it."""
    import asyncio

    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)
