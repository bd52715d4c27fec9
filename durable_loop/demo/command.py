"""``durable-loop demo`` (what ``make demo`` runs): one real session, end to end, on this machine.

Starts the embedded Temporal dev server (or joins the one already on the port), a worker
in-process with the demo tools, and an LLM: the OpenAI-compatible endpoint named by
``DURABLE_LOOP_LLM_*`` variables, else the packaged local model served by ``local_llm``.
Then it runs the demo session, prints each turn as it lands, checks the answers (PASS/FAIL)
and leaves the session inspectable in the Web UI.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from durable_loop.cli.commands.options import StateDir
from durable_loop.cli.errors import CliError
from durable_loop.cli.local_llm import DEFAULT_PORT
from durable_loop.cli.stop_signals import sigterm_as_ctrl_c
from durable_loop.core.constants import STATE_DIR, STORE_DB
from durable_loop.core.errors import ErrorCode

if TYPE_CHECKING:
    from durable_loop.cli.devserver import DevServer
    from durable_loop.client.trace.models import Trace
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.retry import RetrySettings
    from durable_loop.demo.session import DemoReport

# Heavy modules (Temporal SDK, SQLAlchemy, the model runtime) are imported inside the
# functions, so `durable-loop --help` stays fast.

DEMO_TASK_QUEUE = "durable-loop-demo"
LLM_ENV = {
    "base_url": "DURABLE_LOOP_LLM_BASE_URL",
    "model": "DURABLE_LOOP_LLM_MODEL",
    "api_key_env": "DURABLE_LOOP_LLM_API_KEY_ENV",
    "api_prefix": "DURABLE_LOOP_LLM_API_PREFIX",
}
LLM_TIMEOUT_S = 180.0
"""The first request with tools takes 7-10 s on 2 cores, far more on a busy machine."""


def llm_retry() -> RetrySettings:
    from durable_loop.core.retry import RetrySettings

    return RetrySettings(initial_interval_s=2.0, maximum_interval_s=30.0, maximum_attempts=3)


def endpoint_from_env(environ: Mapping[str, str]) -> LlmEndpoint | None:
    """The endpoint named by ``DURABLE_LOOP_LLM_*``, or None to use the local model."""
    values = {k: environ.get(v, "").strip() for k, v in LLM_ENV.items()}
    if not values["base_url"]:
        return None
    if not values["model"]:
        raise CliError(
            ErrorCode.CONFIG_ERROR,
            "DURABLE_LOOP_LLM_BASE_URL is set but DURABLE_LOOP_LLM_MODEL is not: name the model",
        )
    from durable_loop.core.endpoint import LlmEndpoint

    chosen = {k: v for k, v in values.items() if v}
    return LlmEndpoint.model_validate({**chosen, "timeout_s": LLM_TIMEOUT_S, "retry": llm_retry()})


@dataclass
class Timings:
    fetch_s: float | None = None
    model_load_s: float | None = None
    temporal_start_s: float | None = None
    started: float = field(default_factory=time.monotonic)


@contextmanager
def local_endpoint(
    model: str,
    llm_port: int,
    threads: int | None,
    fix_template: bool,
    console: Console,
    timings: Timings,
) -> Iterator[LlmEndpoint]:
    from durable_loop.cli.local_llm import ensure_model, serve_local_model
    from durable_loop.cli.model_fetch import is_complete, variant_of
    from durable_loop.core.endpoint import LlmEndpoint

    variant = variant_of(model)
    fetched = not is_complete(variant)
    began = time.monotonic()
    path = ensure_model(variant, console=console)
    if fetched:
        timings.fetch_s = time.monotonic() - began
    console.print(f"Starting {variant.title} on 127.0.0.1:{llm_port} (CPU)…")
    with serve_local_model(
        path, port=llm_port, threads=threads, alias=variant.alias, fix_tool_arguments=fix_template
    ) as srv:
        timings.model_load_s = srv.load_seconds
        console.print(f"  model ready in {srv.load_seconds:.1f}s at {srv.api_base}")
        yield LlmEndpoint(
            model=srv.model_alias,
            base_url=srv.base_url,
            timeout_s=LLM_TIMEOUT_S,
            retry=llm_retry(),
        )


def temporal_server(state_dir: Path, port: int, ui_port: int, console: Console) -> DevServer | None:
    """Start the dev server, or None when one already listens on the port (joined)."""
    from durable_loop.cli.devserver import port_is_free, start_dev_server
    from durable_loop.workflows.visibility import SEARCH_ATTRIBUTES

    if not port_is_free(port):
        console.print(f"Using the Temporal server already listening on 127.0.0.1:{port}")
        return None
    console.print(f"Starting the Temporal dev server (state in {state_dir}/)…")
    return start_dev_server(
        state_dir, port=port, ui_port=ui_port, search_attributes=SEARCH_ATTRIBUTES
    )


async def run_session(
    address: str, state_dir: Path, endpoint: LlmEndpoint, emit: Console
) -> tuple[DemoReport, Trace]:
    from durable_loop.client.connect import connect
    from durable_loop.client.sessions import SessionClient
    from durable_loop.client.settings import TemporalSettings
    from durable_loop.client.trace.fetch import load_trace
    from durable_loop.demo.session import demo_settings, run_demo_session
    from durable_loop.demo.tools import Notebook, demo_registry
    from durable_loop.store import StoreConfig, open_store
    from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client

    client = await connect(TemporalSettings(address=address))
    store_config = StoreConfig.sqlite_file((state_dir / STORE_DB).resolve())
    store = open_store(store_config)
    notebook = Notebook()
    http = new_http_client()
    deps = WorkerDeps(
        store=store, registry=demo_registry(notebook), http=http, environ=dict(os.environ)
    )
    worker = build_worker(client, deps, task_queue=DEMO_TASK_QUEUE)
    sessions = SessionClient(client, task_queue=DEMO_TASK_QUEUE)
    session_id = f"demo-{uuid.uuid4().hex[:8]}"
    try:
        async with worker:
            report = await run_demo_session(
                sessions,
                store,
                notebook,
                session_id,
                demo_settings(endpoint),
                lambda line: emit.print(line, highlight=False, markup=False, soft_wrap=True),
            )
        trace = await load_trace(client, session_id, db_url=store_config.url)
        return report, trace
    finally:
        await http.aclose()
        await store.close()


def print_report(
    console: Console, report: DemoReport, trace: Trace, timings: Timings, ui_url: str
) -> None:
    from durable_loop.client.trace.render import print_trace

    console.rule("trace")
    print_trace(trace, console)
    console.rule("result")
    for check in report.checks:
        mark = "[green]ok[/]  " if check.ok else "[red]FAIL[/]"
        detail = f" — {check.detail}" if check.detail and not check.ok else ""
        console.print(f"{mark} {check.name}{detail}", highlight=False)
    llm = ", ".join(f"{ms / 1000:.1f}s" for ms in report.llm_ms)
    parts = [f"per LLM turn: {llm}"]
    parts.append("messages: " + ", ".join(f"{s:.1f}s" for s in report.seconds))
    if timings.fetch_s is not None:
        parts.append(f"model fetch {timings.fetch_s:.1f}s")
    if timings.model_load_s is not None:
        parts.append(f"model load {timings.model_load_s:.1f}s")
    if timings.temporal_start_s is not None:
        parts.append(f"Temporal start {timings.temporal_start_s:.1f}s")
    parts.append(f"total {time.monotonic() - timings.started:.1f}s")
    console.print("timings: " + "; ".join(parts), highlight=False)
    turns = sum(r.turns for r in report.results)
    calls = sum(len(r.tool_calls) for r in report.results)
    console.print(f"{len(report.results)} messages, {turns} LLM turns, {calls} tool calls")
    console.print(f"Web UI: {ui_url}/namespaces/default/workflows/{report.workflow_id}")
    console.print(f"Trace again: durable-loop trace {report.session_id}", highlight=False)
    verdict = "[bold green]PASS[/]" if report.passed else "[bold red]FAIL[/]"
    console.print(f"demo: {verdict}")


def wait_for_enter(console: Console) -> None:
    console.print("The session stays inspectable: press Enter (or Ctrl-C) to stop the server.")
    with contextlib.suppress(KeyboardInterrupt, EOFError):
        input()


def demo_command(
    model: Annotated[str, typer.Option(help="Local model size: 1.5b or 0.5b")] = "1.5b",
    state_dir: StateDir = STATE_DIR,
    port: Annotated[int, typer.Option(help="Temporal gRPC port")] = 7233,
    ui_port: Annotated[int, typer.Option(help="Temporal Web UI port")] = 8233,
    llm_port: Annotated[int, typer.Option(help="Port of the local model server")] = DEFAULT_PORT,
    threads: Annotated[int | None, typer.Option(help="CPU threads for the local model")] = None,
    fix_template: Annotated[
        bool,
        typer.Option(
            "--fix-template/--stock-template",
            help="Local model: patched chat template (earlier tool arguments as a JSON "
            "object, not double-encoded; the call example in single braces)",
        ),
    ] = True,
    wait: Annotated[
        bool | None,
        typer.Option(help="Keep the server up after the run (default: when stdin is a TTY)"),
    ] = None,
) -> None:
    """Run a real tool-calling session end to end and check its answer."""
    console = Console(width=None if sys.stdout.isatty() else 120)
    timings = Timings()
    state_dir = Path(state_dir)
    endpoint = endpoint_from_env(os.environ)
    # Stopped by SIGTERM as by Ctrl-C: the dev server and the model stop before we exit.
    with sigterm_as_ctrl_c(), ExitStack() as temporal:
        with ExitStack() as llm:
            if endpoint is None:
                endpoint = llm.enter_context(
                    local_endpoint(model, llm_port, threads, fix_template, console, timings)
                )
            else:
                console.print(f"LLM: {endpoint.model} at {endpoint.base_url}{endpoint.api_prefix}")
            began = time.monotonic()
            dev = temporal_server(state_dir, port, ui_port, console)
            if dev is not None:
                timings.temporal_start_s = time.monotonic() - began
                temporal.callback(dev.stop)
            ui_url = dev.ui_url if dev else f"http://127.0.0.1:{ui_port}"
            console.rule("session")
            report, trace = asyncio.run(
                run_session(f"127.0.0.1:{port}", state_dir, endpoint, console)
            )
        # the model server is stopped here: inspecting the session does not need it
        print_report(console, report, trace, timings, ui_url)
        if dev is not None:
            if sys.stdin.isatty() if wait is None else wait:
                wait_for_enter(console)
            else:
                console.print("Stopping the server; `durable-loop server` reopens the UI.")
    if not report.passed:
        raise typer.Exit(code=1)
