"""``durable-loop server``: the embedded Temporal dev server with its Web UI, in the
foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.codes import CliCode
from durable_loop.cli.commands.options import StateDir
from durable_loop.core.constants import STATE_DIR
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.cli.devserver import DevServer


def _parse_search_attributes(items: list[str]) -> dict[str, str]:
    from durable_loop.cli.errors import CliError

    parsed: dict[str, str] = {}
    for item in items:
        name, sep, kind = item.partition("=")
        if not sep or not name.isidentifier() or not kind:
            raise CliError(
                ErrorCode.INVALID_SETTING, f"--search-attribute wants NAME=TYPE, got {item!r}"
            )
        parsed[name] = kind
    return parsed


def server(
    port: Annotated[int, typer.Option("--port", help="gRPC frontend port.")] = 7233,
    ui_port: Annotated[
        int | None,
        typer.Option("--ui-port", help="Web UI port. Default: --port + 1000.", show_default=False),
    ] = None,
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="Namespace to create at start.")
    ] = "default",
    state_dir: StateDir = STATE_DIR,
    search_attribute: Annotated[
        list[str] | None,
        typer.Option("--search-attribute", help="Register NAME=TYPE (repeatable)."),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="Server log level.")] = "warn",
) -> None:
    """Run the Temporal dev server with SQLite persistence in the state directory."""
    from durable_loop.cli.devserver import start_dev_server

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in _STOP_SIGNALS}
    try:
        dev = start_dev_server(
            Path(state_dir),
            port=port,
            ui_port=ui_port if ui_port is not None else port + 1000,
            namespace=namespace,
            search_attributes=_parse_search_attributes(search_attribute or []),
            log_level=log_level,
        )
        with dev, web_ui_recorded(dev, Path(state_dir)):
            typer.echo(f"Temporal dev server running (state: {dev.db_path}, log: {dev.log_path})")
            typer.echo(f"  gRPC:   {dev.address}  (namespace {dev.namespace})")
            typer.echo(f"  Web UI: {dev.ui_url}")
            typer.echo(f"  CLI:    {dev.cli} --address {dev.address} workflow list")
            typer.echo("Press Ctrl-C to stop.")
            while not stop.wait(0.5):
                if not dev.running() and not stop.is_set():
                    from durable_loop.cli.errors import CliError

                    raise CliError(
                        CliCode.DEV_SERVER_EXITED,
                        f"the dev server exited with code {dev.process.returncode}; "
                        f"see {dev.log_path}",
                    )
            typer.echo("Stopping the dev server...")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    typer.echo("Stopped.")


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def web_ui_recorded(dev: DevServer, state_dir: Path) -> Iterator[None]:
    """While the server runs, the commands that print links find its Web UI."""
    from durable_loop.client.web_ui import forget_web_ui, record_web_ui

    record_web_ui(dev.address, dev.ui_url, state_dir)
    try:
        yield
    finally:
        forget_web_ui(dev.address, state_dir)
