"""The embedded Temporal dev server (`temporal server start-dev`) as a managed child process.

SQLite persistence lives in the project-local state dir, the Web UI is on, and the server
binds to 127.0.0.1 only. ``start_dev_server`` returns once the frontend accepts
connections and the namespace answers ``DescribeNamespace``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from durable_loop.cli.binaries import temporal_cli
from durable_loop.cli.codes import CliCode
from durable_loop.core.constants import DEV_SERVER_DB, STATE_DIR
from durable_loop.core.errors import DurableLoopError
from durable_loop.workflows.visibility import SEARCH_ATTRIBUTES

HOST = "127.0.0.1"
LOG_FILE = "temporal-server.log"

DYNAMIC_CONFIG: dict[str, int] = {
    "history.transferProcessorMaxPollRPS": 1000,
    "history.timerProcessorMaxPollRPS": 1000,
    "history.visibilityProcessorMaxPollRPS": 1000,
    "frontend.namespaceCount": 20000,
    "history.hostLevelCacheMaxSize": 32768,
}
"""Server settings for every dev server we start (CLI, tests, evals, benchmarks).

The history service reads each shard's task queues at most 20 times a second by default,
and the dev server has a single shard: once the first burst of reads is spent, every
workflow task scheduled after an activity (and every activity scheduled after a workflow
task) waited ~40 ms in history before reaching matching, 2 of them per LLM turn. With
1000 reads/s the wait is ~1.5 ms (``bench/dev_server_latency.py``). A cluster spreads the
same limit over its shards; ``infra/dynamicconfig.yaml`` raises it there too.

``frontend.namespaceCount`` caps the calls a namespace may hold open at once (1200 by
default), and a caller waiting on its message's Update holds one: a burst of 2,000 sessions
had ~700 starts refused with "namespace concurrent poller limit exceeded", bare Temporal
workflows alike (``bench/session_starts.py``). ``history.hostLevelCacheMaxSize`` bounds the
workflows whose mutable state the history service keeps in memory; a workflow with an
Update in flight is pinned there, and a burst of 10,000 was refused with "cache capacity is
fully occupied with pinned elements".
"""


def dynamic_config_args(config: dict[str, int] | None = None) -> list[str]:
    args: list[str] = []
    for key, value in (DYNAMIC_CONFIG if config is None else config).items():
        args += ["--dynamic-config-value", f"{key}={value}"]
    return args


class DevServerError(DurableLoopError, RuntimeError):
    """The dev server could not be started (port taken, early exit, not ready in time)."""

    def __init__(self, message: str) -> None:
        super().__init__(CliCode.DEV_SERVER_ERROR, message)


@dataclass
class DevServer:
    """A running ``temporal server start-dev`` process (the session search attributes of
    :mod:`durable_loop.workflows.visibility` are registered at start)."""

    address: str
    ui_url: str
    namespace: str
    db_path: Path
    log_path: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    cli: str = "temporal"
    """The stock ``temporal`` CLI that runs it (``.venv/bin/temporal``: not on PATH unless
    the venv is activated), for the commands the docs show."""

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def workflow_url(self, workflow_id: str) -> str:
        return f"{self.ui_url}/namespaces/{self.namespace}/workflows/{workflow_id}"

    def stop(self, timeout_s: float = 15) -> None:
        """SIGTERM, then SIGKILL if the server has not exited after ``timeout_s``."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)

    def __enter__(self) -> DevServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def port_is_free(port: int, host: str = HOST) -> bool:
    """True if nothing listens on the port (TIME_WAIT leftovers do not count, as the
    server binds with SO_REUSEADDR too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _accepts_connections(port: int, host: str = HOST) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _namespace_ready(address: str, namespace: str) -> bool:
    """Run an async DescribeNamespace in a private thread, so callers inside a running
    event loop can use this function too."""
    outcome: list[bool] = []

    async def probe() -> bool:
        from datetime import timedelta

        from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
        from temporalio.client import Client

        client = await Client.connect(address, namespace=namespace)
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace), timeout=timedelta(seconds=2)
        )
        return True

    def run() -> None:
        try:
            outcome.append(asyncio.run(probe()))
        except Exception:
            outcome.append(False)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=10)
    return bool(outcome and outcome[0])


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, ask the kernel to SIGTERM the server when its parent dies (no orphans).

    The kernel ties this to the calling *thread*, so it is only armed from the main thread.
    """
    if (
        not sys.platform.startswith("linux")
        or threading.current_thread() is not threading.main_thread()
    ):
        return None

    def preexec() -> None:
        import ctypes

        pr_set_pdeathsig = 1
        with contextlib.suppress(Exception):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)

    return preexec


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def dev_server_command(
    binary: str,
    db_path: Path,
    *,
    port: int,
    ui_port: int,
    namespace: str,
    search_attributes: dict[str, str] | None,
    log_level: str,
) -> list[str]:
    cmd = [
        binary,
        "server",
        "start-dev",
        "--ip",
        HOST,
        "--port",
        str(port),
        "--ui-port",
        str(ui_port),
        "--db-filename",
        str(db_path),
        "--log-level",
        log_level,
        "--ui-disable-news-fetch",
        *dynamic_config_args(),
    ]
    if namespace != "default":
        cmd += ["--namespace", namespace]
    for name, kind in (search_attributes or {}).items():
        cmd += ["--search-attribute", f"{name}={kind}"]
    return cmd


def start_dev_server(
    state_dir: Path = STATE_DIR,
    *,
    port: int = 7233,
    ui_port: int = 8233,
    namespace: str = "default",
    search_attributes: dict[str, str] | None = None,
    log_level: str = "warn",
    ready_timeout_s: float = 30,
) -> DevServer:
    binary = temporal_cli()
    for label, wanted in (("gRPC", port), ("Web UI", ui_port)):
        if not port_is_free(wanted):
            raise DevServerError(
                f"{label} port {HOST}:{wanted} is already in use: stop whatever listens "
                f"there or pick another port (--port / --ui-port)"
            )
    state_dir.mkdir(parents=True, exist_ok=True)
    db_path = (state_dir / DEV_SERVER_DB).resolve()
    log_path = (state_dir / LOG_FILE).resolve()
    cmd = dev_server_command(
        binary,
        db_path,
        port=port,
        ui_port=ui_port,
        namespace=namespace,
        search_attributes={**SEARCH_ATTRIBUTES, **(search_attributes or {})},
        log_level=log_level,
    )
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent(),
            start_new_session=True,  # a terminal's Ctrl-C reaches us; we stop the server
        )
    server = DevServer(
        address=f"{HOST}:{port}",
        ui_url=f"http://{HOST}:{ui_port}",
        namespace=namespace,
        db_path=db_path,
        log_path=log_path,
        process=process,
        cli=binary,
    )
    try:
        _wait_ready(server, port, ready_timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


async def start_local_environment(
    *extra_args: str, dynamic_config: dict[str, int] | None = None
) -> WorkflowEnvironment:
    """An in-memory dev server with the Pydantic converter (tests, evals, benchmarks);
    ``dynamic_config={}`` starts it with the server's own defaults."""
    return await WorkflowEnvironment.start_local(
        data_converter=pydantic_data_converter,
        dev_server_existing_path=temporal_cli(),
        dev_server_log_level="error",
        dev_server_extra_args=[*dynamic_config_args(dynamic_config), *extra_args],
    )


def _wait_ready(server: DevServer, port: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        code = server.process.poll()
        if code is not None:
            raise DevServerError(
                f"temporal dev server exited with code {code}: {_log_tail(server.log_path)} "
                f"(full log: {server.log_path})"
            )
        if _accepts_connections(port) and _namespace_ready(server.address, server.namespace):
            return
        time.sleep(0.1)
    raise DevServerError(
        f"temporal dev server not ready at {server.address} after {timeout_s:.0f}s "
        f"(log: {server.log_path})"
    )
