"""The ``durable-loop`` command line. Each command lives in its own module; this file
only names them (one :class:`~durable_loop.cli.lazy.Entry` each, imported when the command
runs, so ``--help`` and ``--version`` import no command module) and owns the error
boundary that turns known failures into one line on stderr with exit code 2. Commands of
the layers above the CLI (eval, chaos, demo, route-bench) are added by
:mod:`durable_loop.console`, the console script.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from typing import Annotated, Any

import typer

from durable_loop.cli.lazy import Entry, LazyGroup

SESSIONS = "Sessions"
PEOPLE = "People"
RUNNING = "Running"
EVALUATION = "Evaluation"
OPERATIONS = "Operations"
PANELS = (SESSIONS, PEOPLE, RUNNING, EVALUATION, OPERATIONS)

COMMANDS = "durable_loop.cli.commands"

ENTRIES: dict[str, Entry] = {
    e.name: e
    for e in (
        Entry(
            "send",
            f"{COMMANDS}.send:send",
            SESSIONS,
            "Send a message to a session (--start with --model starts it) and print the "
            "reply and a run summary.",
        ),
        Entry(
            "chat",
            f"{COMMANDS}.chat:chat",
            SESSIONS,
            "Chat with a session: tool calls show as they happen; approve or reject inline.",
        ),
        Entry(
            "result",
            f"{COMMANDS}.result:result",
            SESSIONS,
            "Wait for a message's final result (once its held calls are decided) and print it.",
        ),
        Entry(
            "sessions",
            f"{COMMANDS}.sessions:sessions",
            SESSIONS,
            "List sessions: status, last activity, decisions waiting, model.",
        ),
        Entry(
            "status",
            f"{COMMANDS}.status:status",
            SESSIONS,
            "Show a session's state: messages, turns, tokens, budget and what waits for a person.",
        ),
        Entry(
            "trace",
            f"{COMMANDS}.trace:trace",
            SESSIONS,
            "Show every message of a session and its turns: models, tool calls, results, tokens.",
        ),
        Entry(
            "workspace",
            f"{COMMANDS}.workspace:workspace",
            SESSIONS,
            "Show a session's workspace: facts, draft, locks and who changed or decided what.",
        ),
        Entry(
            "cancel",
            f"{COMMANDS}.cancel:cancel",
            SESSIONS,
            "Cancel a session's running (or a queued) message and print its result.",
        ),
        Entry(
            "budget",
            f"{COMMANDS}.budget:budget",
            SESSIONS,
            "Show a session's budget, or change it from its next message on.",
        ),
        Entry(
            "fork",
            f"{COMMANDS}.fork:fork",
            SESSIONS,
            "Start a new session from another's transcript up to a turn (nothing is re-run).",
        ),
        Entry(
            "export",
            f"{COMMANDS}.export:export",
            SESSIONS,
            "Print a session as a portable bundle (JSON, without secrets).",
        ),
        Entry(
            "import",
            f"{COMMANDS}.import_session:import_session",
            SESSIONS,
            "Recreate an exported session (a bundle) as a new session on this server and store.",
        ),
        Entry(
            "pending",
            f"{COMMANDS}.pending:pending",
            PEOPLE,
            "List what waits for a person: held tool calls and proposals, of one session "
            "or of all.",
        ),
        Entry(
            "approve",
            f"{COMMANDS}.decide:approve",
            PEOPLE,
            "Approve a held tool call (it runs) or a proposal (its facts change is committed).",
        ),
        Entry(
            "reject",
            f"{COMMANDS}.decide:reject",
            PEOPLE,
            "Reject a held tool call (it does not run) or a proposal (facts stay unchanged).",
        ),
        Entry(
            "confirm",
            f"{COMMANDS}.decide:approve",
            PEOPLE,
            "Another spelling of `approve`.",
            hidden=True,
        ),
        Entry(
            "proposals",
            f"{COMMANDS}.proposals:proposals",
            PEOPLE,
            "List a session's proposals that wait for a person, and recent decisions.",
        ),
        Entry(
            "tool-calls",
            f"{COMMANDS}.tool_calls:app",
            PEOPLE,
            "A session's tool calls held for approval: list, approve, edit, reject.",
        ),
        Entry(
            "server",
            f"{COMMANDS}.server:server",
            RUNNING,
            "Run the Temporal dev server (SQLite in the state directory, with its Web UI).",
        ),
        Entry(
            "worker",
            f"{COMMANDS}.worker:worker",
            RUNNING,
            "Run a worker for the session workflow and your tools.",
        ),
        Entry(
            "serve",
            f"{COMMANDS}.serve:serve",
            RUNNING,
            "Serve sessions, decisions and traces over HTTP, and the approval page.",
        ),
        Entry(
            "local-llm",
            "durable_loop.cli.local_llm:local_llm_command",
            RUNNING,
            "Serve the packaged local model as an OpenAI-compatible API.",
        ),
        Entry(
            "deployment",
            f"{COMMANDS}.deployment:deployment",
            OPERATIONS,
            "Show a worker deployment's builds and the sessions on each; --set-current moves "
            "new and running sessions to a build.",
        ),
        Entry(
            "codec-server",
            f"{COMMANDS}.codec_server:codec_server",
            OPERATIONS,
            "Serve Temporal's codec protocol so the Web UI shows encrypted payloads.",
        ),
    )
}


def version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    python = ".".join(str(part) for part in sys.version_info[:3])
    return f"durable-loop {of('durable-loop')} (temporalio {of('temporalio')}, Python {python})"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


class ErrorBoundary(LazyGroup):
    """Known failures become ``error: CODE: what to do`` and exit code 2; unknown ones
    keep their traceback."""

    entries = ENTRIES
    panels = PANELS

    def invoke(self, ctx: Any) -> Any:  # typer vendors click; its Context type is private
        try:
            return super().invoke(ctx)
        except Exception as err:  # usage errors and typer.Exit are not "known": re-raised
            from durable_loop.cli.errors import EXIT_BAD_INPUT, explain

            message = explain(err)
            if message is None:
                raise
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None


app = typer.Typer(
    cls=ErrorBoundary,
    name="durable-loop",
    help="Durable, inspectable LLM tool calling on Temporal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # click's help, not Rich's: Rich's option tables cut long option names and words at
    # 80 columns (`--max-concurrent-ac…`); the command panels are drawn by LazyGroup
    rich_markup_mode=None,
)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """Durable, inspectable LLM tool calling on Temporal."""


def add_command(entry: Entry) -> None:
    """Register a command of a layer above the CLI (see :mod:`durable_loop.console`)."""
    ENTRIES[entry.name] = entry


def run(command: typer.Typer) -> None:
    """Run ``command`` as the ``durable-loop`` program and exit with its code."""
    try:
        command(prog_name="durable-loop")
        code: int | str | None = 0
    except SystemExit as done:
        code = done.code
    except BaseException:
        traceback.print_exc()
        code = 1
    _exit_now(code)


def _exit_now(code: int | str | None) -> None:
    """Exit without interpreter finalization: the Temporal client's Rust threads can
    abort a finalizing interpreter (temporalio/sdk-python#300, "PyGILState_Release")."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
