"""The ``durable-loop`` command line. Each command lives in its own module under
``durable_loop/workers/commands/``; this file only registers them (one line each) and owns
the error boundary that turns known failures into one line on stderr with exit code 2.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from durable_loop.workers.commands import send, server, trace, worker
from durable_loop.workers.demo_cmd import demo_command
from durable_loop.workers.local_llm import local_llm_command


class ErrorBoundary(TyperGroup):
    """Known failures become ``error: CODE: what to do`` and exit code 2; unknown ones
    keep their traceback."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors click; its Context type is private
        try:
            return super().invoke(ctx)
        except Exception as err:  # usage errors and typer.Exit are not "known": re-raised
            from durable_loop.workers.errors import EXIT_BAD_INPUT, explain

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
)

app.command("server")(server.server)
app.command("worker")(worker.worker)
app.command("send")(send.send)
app.command("trace")(trace.trace)
app.command("demo")(demo_command)
app.command("local-llm")(local_llm_command)


def main() -> None:
    app(prog_name="durable-loop")
