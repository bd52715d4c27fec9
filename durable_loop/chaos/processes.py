"""The processes the harness breaks: a real ``durable-loop worker`` subprocess (killed with
SIGKILL, restarted) and the embedded dev server (killed, restarted on the same SQLite file
and port)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from durable_loop.chaos.codes import ChaosCode
from durable_loop.cli.devserver import DevServer, free_port, start_dev_server
from durable_loop.core.errors import DurableLoopError

READY_LINE = "worker polling task queue"
TOOLS = "durable_loop.chaos.tools:registry"


class ChaosProcessError(DurableLoopError, RuntimeError):
    """A worker or server did not come up (its log tail is in the message)."""

    def __init__(self, message: str) -> None:
        super().__init__(ChaosCode.CHAOS_PROCESS_FAILED, message)


@dataclass
class WorkerProcess:
    """``python -m durable_loop worker`` with the chaos tools, output in a log file."""

    address: str
    task_queue: str
    db_url: str
    log_dir: Path
    extra_args: list[str] = field(default_factory=list)
    tools: str = TOOLS
    name: str = "worker"
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "durable_loop",
            "worker",
            "--address",
            self.address,
            "--task-queue",
            self.task_queue,
            "--db-url",
            self.db_url,
            "--tools",
            self.tools,
            *self.extra_args,
        ]

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}-{self.task_queue}-{self.starts}.log"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        assert self.process is not None, "start() the worker first"
        return self.process.pid

    async def start(self, ready_timeout_s: float = 60.0) -> None:
        if self.running():
            return
        self.starts += 1
        env = {**os.environ, "DURABLE_LOOP_DB_URL": self.db_url, "PYTHONUNBUFFERED": "1"}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + ready_timeout_s
        while time.monotonic() < deadline:
            if READY_LINE in self._log():
                return
            if not self.running():
                raise ChaosProcessError(f"worker exited early: {self._log()[-2000:]}")
            await asyncio.sleep(0.1)
        self.kill()
        raise ChaosProcessError(f"worker not ready after {ready_timeout_s}s: {self._log()[-2000:]}")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, in-flight activities are simply lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
            self.kills += 1

    def stop(self) -> None:
        """SIGTERM (graceful), SIGKILL after 15 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def _log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


@dataclass
class ServerProcess:
    """The dev server on fixed ports and a SQLite file, so a restart resumes its state."""

    state_dir: Path
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    server: DevServer | None = None
    restarts: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> DevServer:
        self.server = start_dev_server(
            self.state_dir, port=self.port, ui_port=self.ui_port, log_level="error"
        )
        return self.server

    def kill(self) -> None:
        if self.server is not None and self.server.running():
            self.server.process.send_signal(signal.SIGKILL)
            self.server.process.wait(timeout=10)

    def restart(self, *, hard: bool = True, down_s: float = 1.0) -> DevServer:
        """Kill (SIGKILL when ``hard``, else SIGTERM) and start again on the same file."""
        if hard:
            self.kill()
        elif self.server is not None:
            self.server.stop()
        time.sleep(down_s)
        self.restarts += 1
        return self.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
