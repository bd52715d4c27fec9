"""The ``durable-loop`` command line. Each command lives in its own module under
``durable_loop/cli/commands/``; this file only registers them (one line each) and owns
the error boundary that turns known failures into one line on stderr with exit code 2.
Commands of the layers above the CLI (eval, chaos, demo, route-bench) are added by
:mod:`durable_loop.console`, the console script.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from typing import Any

import typer
from typer.core import TyperGroup

from durable_loop.cli.commands import (
    budget,
    cancel,
    chat,
    codec_server,
    proposals,
    send,
    serve,
    server,
    tool_calls,
    trace,
    worker,
    workspace,
)
from durable_loop.cli.errors import EXIT_BAD_INPUT, explain
from durable_loop.cli.local_llm import local_llm_command


class ErrorBoundary(TyperGroup):
    """Known failures become ``error: CODE: what to do`` and exit code 2; unknown ones
    keep their traceback."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors click; its Context type is private
        try:
            return super().invoke(ctx)
        except Exception as err:  # usage errors and typer.Exit are not "known": re-raised
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
    # click's plain help: Rich's option tables cut long option names and words at 80
    # columns (`--max-concurrent-ac…`); plain help wraps instead (panels are not drawn)
    rich_markup_mode=None,
)

app.command("server")(server.server)
app.command("worker")(worker.worker)
app.command("send")(send.send)
app.command("trace")(trace.trace)
app.command("workspace")(workspace.workspace)
app.command("serve")(serve.serve)
app.command("chat")(chat.chat)
app.command("local-llm")(local_llm_command)
app.command("proposals")(proposals.proposals)
app.command("confirm")(proposals.confirm)
app.command("approve", hidden=True, help="Old spelling of `confirm`.")(proposals.confirm)
app.command("reject")(proposals.reject)
app.command("budget")(budget.budget)
app.command("cancel")(cancel.cancel)
app.command("codec-server")(codec_server.codec_server)
app.add_typer(tool_calls.app, name="tool-calls")
app.command("result")(tool_calls.result)


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
