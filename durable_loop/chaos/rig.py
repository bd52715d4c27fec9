"""The harness: a dev server on a SQLite file, a worker subprocess, a scripted LLM endpoint,
the store the worker writes, and the checks that run after each scenario."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from temporalio.client import Client
from temporalio.service import RPCError

from durable_loop.chaos.checks import SessionCheck, WorkflowsFor, check_session
from durable_loop.chaos.ledger import Ledger
from durable_loop.chaos.processes import ServerProcess, WorkerProcess
from durable_loop.client.connect import connect
from durable_loop.client.sessions import SessionClient
from durable_loop.client.settings import TemporalSettings
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.core.runtime_groups import RetriesConfig
from durable_loop.store import StoreConfig, TranscriptStore, open_store
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.testing import RecordedRequest, Reply, ScriptedLLM

T = TypeVar("T")
HEARTBEAT_TIMEOUT_S = 2.0
LLM_RETRY = RetrySettings(initial_interval_s=0.2, maximum_interval_s=2.0, maximum_attempts=8)
TOOL_RETRY = RetrySettings(initial_interval_s=0.2, maximum_interval_s=1.0, maximum_attempts=3)
LOAD_SESSIONS = 300
"""Sessions in flight in the load scenarios (``many_workers_kill``); tests use fewer."""


class Gate:
    """A scripted reply that holds the HTTP request open and tells the harness it arrived,
    so a fault can be injected while the call is in flight."""

    def __init__(self, reply: Reply, hold_s: float) -> None:
        self.reply = dataclasses.replace(reply, delay_s=hold_s)
        self.arrived = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        self.arrived.set()
        return self.reply

    async def wait(self, timeout_s: float = 60.0) -> None:
        if not await asyncio.to_thread(self.arrived.wait, timeout_s):
            raise TimeoutError("the scripted request never arrived")


class ChaosRig:
    def __init__(
        self,
        workdir: Path,
        llm: ScriptedLLM,
        *,
        db_url: str | None = None,
        load_sessions: int = LOAD_SESSIONS,
        sticky_timeout_s: float | None = None,
    ) -> None:
        self.workdir = workdir
        self.load_sessions = load_sessions
        self.sticky_timeout_s = sticky_timeout_s
        """The peers' ``--sticky-timeout-s`` (None: the SDK's 10 s)."""
        self.llm = llm
        self.db_url = db_url or StoreConfig.sqlite_file(workdir / "store.db").url
        self.server = ServerProcess(workdir / "temporal")
        self.task_queue = f"chaos-{uuid.uuid4().hex[:8]}"
        self.worker = WorkerProcess(self.server.address, self.task_queue, self.db_url, workdir)
        self.peers: list[WorkerProcess] = []
        self.sessions_started: list[str] = []
        self._client: Client | None = None
        self._store: TranscriptStore | None = None
        self._workspace: WorkspaceStore | None = None
        self._ledger: Ledger | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> ChaosRig:
        await asyncio.to_thread(self.server.start)
        self._client = await connect(TemporalSettings(address=self.server.address))
        self._store = open_store(StoreConfig(url=self.db_url))
        self._workspace = open_workspace_store(StoreConfig(url=self.db_url))
        self._ledger = Ledger(self.db_url)
        await self.worker.start()
        return self

    async def close(self) -> None:
        self.worker.stop()
        for peer in self.peers:
            peer.stop()
        if self._store is not None:
            await self._store.close()
        if self._workspace is not None:
            await self._workspace.close()
        if self._ledger is not None:
            self._ledger.close()
        self.server.stop()

    @property
    def client(self) -> Client:
        assert self._client is not None, "start() the rig first"
        return self._client

    @property
    def sessions(self) -> SessionClient:
        return SessionClient(self.client, task_queue=self.task_queue, search_attributes=False)

    @property
    def ledger(self) -> Ledger:
        assert self._ledger is not None, "start() the rig first"
        return self._ledger

    @property
    def workspace(self) -> WorkspaceStore:
        assert self._workspace is not None, "start() the rig first"
        return self._workspace

    # ------------------------------------------------------------------ faults

    async def kill_worker(self) -> None:
        await asyncio.to_thread(self.worker.kill)

    async def start_worker(self) -> None:
        await self.worker.start()

    async def start_peers(self, count: int) -> list[WorkerProcess]:
        """``count`` more worker processes on the same task queue and store (kept running
        until :meth:`stop_peers` or :meth:`close`)."""
        sticky = [] if self.sticky_timeout_s is None else ["--sticky-timeout-s"]
        sticky += [] if self.sticky_timeout_s is None else [str(self.sticky_timeout_s)]
        while len(self.peers) < count:
            name = f"peer{len(self.peers) + 1}"
            self.peers.append(
                WorkerProcess(
                    self.server.address,
                    self.task_queue,
                    self.db_url,
                    self.workdir,
                    extra_args=sticky,
                    name=name,
                )
            )
        await asyncio.gather(*(peer.start() for peer in self.peers[:count]))
        return self.peers[:count]

    async def stop_peers(self) -> None:
        await asyncio.gather(*(asyncio.to_thread(peer.stop) for peer in self.peers))

    async def restart_server(self, *, hard: bool = True) -> None:
        await asyncio.to_thread(self.server.restart, hard=hard)

    # ------------------------------------------------------------------ sessions

    def new_session(self, label: str) -> tuple[str, str]:
        """A fresh (session id, model name); the model name keys the scripted replies."""
        suffix = uuid.uuid4().hex[:8]
        session_id = f"chaos-{label}-{suffix}"
        self.sessions_started.append(session_id)
        return session_id, f"chaos-{label}-{suffix}"

    def settings(
        self, model: str, *, timeout_s: float = 10.0, runtime: RuntimeConfig | None = None
    ) -> SessionSettings:
        return SessionSettings(
            llm=LlmEndpoint(
                model=model, base_url=self.llm.base_url, timeout_s=timeout_s, retry=LLM_RETRY
            ),
            runtime=runtime
            or RuntimeConfig(
                retries=RetriesConfig(
                    heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S, tool_retry=TOOL_RETRY
                )
            ),
        )

    async def wait_for_invocation(
        self, session_id: str, tool: str, timeout_s: float = 60, *, count: int = 1
    ) -> None:
        """Until ``tool`` was invoked ``count`` times in the session (retries included)."""

        async def invoked() -> bool:
            runs = await asyncio.to_thread(self.ledger.invocations, session_id, tool)
            return len(runs) >= count

        await eventually(invoked, timeout_s)

    async def wait_for_effects(self, session_id: str, count: int, timeout_s: float = 60) -> None:
        """Until the session's tools applied ``count`` effects in the ledger."""

        async def applied() -> bool:
            return await asyncio.to_thread(self.ledger.effects, session_id) >= count

        await eventually(applied, timeout_s)

    async def check(
        self, session_id: str, workflows_for: WorkflowsFor | None = None
    ) -> SessionCheck:
        assert self._store is not None and self._workspace is not None
        return await check_session(
            self.client, self._store, self._workspace, session_id, workflows_for
        )


async def eventually(probe: Callable[[], Awaitable[bool]], timeout_s: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await probe():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"condition not reached within {timeout_s}s")
        await asyncio.sleep(0.1)


async def through_outages(call: Callable[[], Awaitable[T]], timeout_s: float = 120) -> T:
    """Repeat an idempotent client call (same message id) while the server is unreachable."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        try:
            return await call()
        except RPCError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)
