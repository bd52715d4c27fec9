"""The stage the docs' examples run on: an embedded dev server and the scripted endpoint in
place of the servers the docs start (``stand-in``), a fresh directory per page with
``.venv/bin/durable-loop`` (and ``durable-loop`` / ``temporal`` on PATH), the objects a block
takes as ``given`` and the situations a block starts from (``setup``).

Addresses the docs name are the test's: the dev server's for ``127.0.0.1:7233`` (and
``TEMPORAL_ADDRESS`` for every command), the scripted endpoint's for the model servers on
``127.0.0.1:8080`` (local-llm) and ``127.0.0.1:8000``. The models the docs name answer from
:data:`MODELS`, each a function of the request (so a block may run any number of times).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from temporalio.client import Client
from temporalio.service import RPCError

from durable_loop.cli.binaries import temporal_cli
from durable_loop.client.history import fetch_histories
from durable_loop.client.sessions import SessionClient
from durable_loop.core import names
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.constants import TASK_QUEUE
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.store import StoreConfig, open_store
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import reply
from durable_loop.testing.history import replay_failures
from durable_loop.testing.scripted import RecordedRequest, Reply, ScriptedLLM
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from tests.docs.blocks import RUNNABLE, Block, commands_of
from tests.docs.interpreter import docs_interpreter
from tests.docs.sdk_exit import exited_cleanly

COMMAND_TIMEOUT_S = 120
READY_TIMEOUT_S = 60

# ------------------------------------------------------------------ the models the docs name


def answers(first: Reply, then: Reply) -> Callable[[RecordedRequest], Reply]:
    """``first`` to a user's message, ``then`` once a tool result came back."""
    return lambda request: then if request.messages[-1].get("role") == "tool" else first


TITLE = [{"op": "add", "path": "/title", "value": "Q3 report"}]
SUBTITLE = [{"op": "add", "path": "/subtitle", "value": "numbers and notes"}]
MODELS: dict[str, Callable[[RecordedRequest], Reply]] = {
    # README quick tour (the packaged local model's name)
    "qwen2.5-coder-1.5b-instruct": answers(
        reply.tool_call("calculate", {"expression": "23 * 19"}), reply.text("23 * 19 = 437")
    ),
    # docs/service.md
    "qwen2.5-7b-instruct": answers(
        reply.tool_call("facts_propose", {"changes": TITLE, "summary": "Rename to Q3 report"}),
        reply.text("I proposed renaming the report to Q3 report."),
    ),
    # setup `proposals`
    "docs-proposals": answers(
        reply.tool_calls(
            ("facts_propose", {"changes": TITLE, "summary": "title"}, "call-title"),
            ("facts_propose", {"changes": SUBTITLE, "summary": "subtitle"}, "call-subtitle"),
        ),
        reply.text("Two proposals wait for your decision."),
    ),
    # setup `streaming session`
    "docs-stream": lambda request: reply.text("2 + 3 = 5"),
    # setup `running message`: the essay is slow, anything after it quick
    "docs-running": lambda request: (
        reply.slow(reply.text("An essay on tides..."), 60)
        if "essay" in str(request.messages[-1].get("content"))
        else reply.text("Here is the summary.")
    ),
    # setup `typed session`: prose first, the JSON once the loop sends the errors back
    "docs-typed": lambda request: (
        reply.text('{"number": "INV-7", "total_cents": 1250}')
        if "output schema" in str(request.messages[-1].get("content"))
        else reply.text("Invoice INV-7 comes to 12.50.")
    ),
    # setup `tool approvals` (the fingerprints docs/approvals.md shows are of these calls)
    "docs-approvals": answers(
        reply.tool_calls(
            ("pay", {"amount": 250, "to": "acme"}, "call_pay_1"),
            ("pay", {"amount": 5, "to": "bob"}, "call_pay_2"),
        ),
        reply.text("done"),
    ),
}

# ------------------------------------------------------------------ the reader's own objects

GIVEN: dict[str, str] = {
    "registry": "from durable_loop import ToolRegistry\nregistry = ToolRegistry()",
    "my_registry": "from durable_loop import ToolRegistry\nmy_registry = ToolRegistry()",
    "my_tools": "from durable_loop import ToolRegistry\nmy_tools = ToolRegistry()",
    "MyWorkflow": "from tests.docs.reader import MyWorkflow",
    "store": (
        "import os\nfrom durable_loop import StoreConfig, open_store\n"
        "store = open_store(StoreConfig(url=os.environ['DURABLE_LOOP_DB_URL']))"
    ),
    "sessions": (
        "from durable_loop import SessionClient, TemporalSettings, connect\n"
        "sessions = SessionClient(await connect(TemporalSettings.load()))"
    ),
    "session_id": "import os\nsession_id = os.environ['DOCS_SESSION_ID']",
    "llm": "from durable_loop import LlmEndpoint\nllm = LlmEndpoint(model='your-model')",
}

# ------------------------------------------------------------------ long-running commands

SERVICE = re.compile(r"(?:^|[\s/])durable-loop\s+(worker|serve|codec-server|server|local-llm)\b")
READY = {
    "worker": "worker polling task queue",
    "serve": "durable-loop service on",
    "codec-server": "codec server on",
}


class Stage:
    """Runs the blocks of one page, in order, in ``cwd``."""

    def __init__(self, client: Client, llm: ScriptedLLM, cwd: Path) -> None:
        self.client = client
        self.llm = llm
        self.cwd = cwd
        self.address = client.service_client.config.target_host
        self.bin = cwd / ".venv" / "bin"
        self.bin.mkdir(parents=True)
        self.python = docs_interpreter(cwd)
        self.skipped: list[str] = []
        shim = self.bin / "durable-loop"
        shim.write_text(f'#!/bin/sh\nexec "{self.python.python}" -m durable_loop "$@"\n')
        shim.chmod(0o755)
        (self.bin / "python").symlink_to(self.python.python)
        (self.bin / "temporal").symlink_to(temporal_cli())
        keep = {
            k: v for k, v in os.environ.items() if not k.startswith(("DURABLE_LOOP_", "TEMPORAL_"))
        }
        self.environ = {
            **keep,
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": self.python.pythonpath,
            "TEMPORAL_ADDRESS": self.address,
            "NO_COLOR": "1",
        }
        if "DURABLE_LOOP_TEST_SERVER" in os.environ:  # the `pytest` blocks run on this run's kind
            self.environ["DURABLE_LOOP_TEST_SERVER"] = os.environ["DURABLE_LOOP_TEST_SERVER"]
        self.substitutions = {
            "http://127.0.0.1:8080": llm.base_url,
            "http://127.0.0.1:8000": llm.base_url,
            "127.0.0.1:7233": self.address,
        }
        self.workflow_ids: set[str] = set()
        self.files = 0  # numbers the files the page writes
        for model, answer in MODELS.items():
            llm.script(model, [], then=answer)

    def substitute(self, text: str) -> str:
        for docs, ours in self.substitutions.items():
            text = text.replace(docs, ours)
        return text

    async def run(self, block: Block) -> None:
        if block.skip_reason is not None or block.language not in RUNNABLE:
            return
        environ = dict(self.environ)
        async with contextlib.AsyncExitStack() as stack:
            for name in block.directives.get("setup", []):
                environ.update(await stack.enter_async_context(self.setup(name)))
            if "pytest" in block.directives:
                await self.run_pytest(block, environ)
            elif block.language == "python":
                await self.run_python(block, environ)
            else:
                await self.run_shell(block, environ, stack)

    # ------------------------------------------------------------------ shell

    async def run_shell(
        self, block: Block, environ: dict[str, str], stack: contextlib.AsyncExitStack
    ) -> None:
        stand_ins = set(block.directives.get("stand-in", []))
        for command in commands_of(block.source):
            service = SERVICE.search(command)
            kind = service.group(1) if service else None
            if kind in {"server", "local-llm"}:
                assert kind in stand_ins, f"{block.where}: mark `{kind}` as a stand-in"
                continue
            command = self.substitute(command)
            if kind is not None:
                await stack.enter_async_context(self.service(block, command, kind, environ))
            else:
                await self.check(block, ["bash", "-c", command], environ, shown=command)

    async def check(
        self,
        block: Block,
        argv: list[str],
        environ: dict[str, str],
        *,
        shown: str,
        cwd: Path | None = None,
    ) -> str:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd or self.cwd,
            env=environ,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            out, _ = await asyncio.wait_for(process.communicate(), COMMAND_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise AssertionError(
                f"{block.where}: `{shown}` did not finish in {COMMAND_TIMEOUT_S}s"
            ) from None
        text = out.decode(errors="replace")
        assert exited_cleanly(process.returncode, text), (
            f"{block.where}: `{shown}` exited {process.returncode}:\n{text}"
        )
        return text

    @asynccontextmanager
    async def service(
        self, block: Block, command: str, kind: str, environ: dict[str, str]
    ) -> AsyncIterator[None]:
        """A long-running command in the background while the rest of its block runs."""
        self.files += 1
        log = self.cwd / f"service-{self.files}.log"
        with log.open("wb") as sink:
            process = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=self.cwd,
                env=environ,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=sink,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while READY[kind] not in (output := log.read_text(errors="replace")):
                if process.returncode is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{block.where}: `{command}` did not start:\n{output}")
                await asyncio.sleep(0.1)
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()

    # ------------------------------------------------------------------ python

    async def run_python(self, block: Block, environ: dict[str, str]) -> None:
        given = block.directives.get("given", [])
        unknown = [name for name in given if name not in GIVEN]
        assert not unknown, f"{block.where}: no given {unknown} in tests/docs/stage.py"
        self.files += 1
        spec = self.cwd / f"block-{self.files}.json"
        spec.write_text(
            json.dumps(
                {
                    "where": block.where,
                    "given": "\n".join(GIVEN[name] for name in given),
                    "source": self.substitute(block.source),
                }
            )
        )
        argv = [self.python.python, "-m", "tests.docs.python_block", str(spec)]
        await self.check(block, argv, environ, shown=f"python {block.where}")

    async def run_pytest(self, block: Block, environ: dict[str, str]) -> None:
        """The block as the only test file of a project of its own: no pytest
        configuration, so it passes as written or not at all."""
        self.files += 1
        project = self.cwd / f"project-{self.files}"
        project.mkdir()
        (project / "test_example.py").write_text(block.source)
        if not self.python.has_pytest:
            self.skipped.append(
                f"{block.where}: pytest is not installed beside {self.python.python}"
            )
            return
        argv = [
            self.python.python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_example.py",
        ]
        await self.check(block, argv, environ, shown=f"pytest {block.where}", cwd=project)

    # ------------------------------------------------------------------ setups

    def setup(self, name: str) -> AbstractAsyncContextManager[dict[str, str]]:
        setups = {
            "proposals": self.setup_proposals,
            "workspace worker": self.setup_workspace_worker,
            "streaming session": self.setup_streaming_session,
            "tool approvals": self.setup_tool_approvals,
            "running message": self.setup_running_message,
            "typed session": self.setup_typed_session,
        }
        assert name in setups, f"no setup {name!r} in tests/docs/stage.py"
        return setups[name]()

    @asynccontextmanager
    async def worker(self, db_url: str, *, gated_pay: bool = False) -> AsyncIterator[SessionClient]:
        """A worker with the workspace tools on the ``durable-loop`` task queue (and a
        ``pay`` tool that needs a person's approval, with ``gated_pay``)."""
        store = open_store(StoreConfig(url=db_url))
        workspace = open_workspace_store(StoreConfig(url=db_url))
        http = new_http_client()
        registry = workspace_tools(workspace)
        if gated_pay:

            @registry.tool(requires_approval=True)
            def pay(amount: int, to: str) -> str:
                """Pay an amount to someone."""
                return f"paid {amount} to {to}"

        deps = WorkerDeps(store=store, registry=registry, http=http)
        try:
            async with build_worker(self.client, deps, task_queue=TASK_QUEUE):
                yield SessionClient(self.client, task_queue=TASK_QUEUE, search_attributes=False)
        finally:
            await http.aclose()
            await workspace.close()
            await store.close()

    def fresh_db(self) -> str:
        self.files += 1
        return f"sqlite:///{self.cwd / f'store-{self.files}.db'}"

    async def fresh_session(self, session_id: str) -> None:
        workflow_id = names.session_workflow_id(session_id)
        with contextlib.suppress(RPCError):
            await self.client.get_workflow_handle(workflow_id).terminate("docs test: fresh start")
        self.workflow_ids.add(workflow_id)

    @asynccontextmanager
    async def setup_workspace_worker(self) -> AsyncIterator[dict[str, str]]:
        """On the store the CLI uses by default in the page's directory."""
        default = StoreConfig.sqlite_file(self.cwd / ".durable-loop" / "durable-loop.db")
        async with self.worker(default.url):
            yield {}

    @asynccontextmanager
    async def setup_proposals(self) -> AsyncIterator[dict[str, str]]:
        """Session ``s1`` with two pending proposals: a title and a subtitle."""
        db_url = self.fresh_db()
        await self.fresh_session("s1")
        async with self.worker(db_url) as sessions:
            settings = SessionSettings(
                llm=LlmEndpoint(model="docs-proposals", base_url=self.llm.base_url)
            )
            await sessions.start_and_send("s1", settings, "Give the report a title and a subtitle")
            yield {"DURABLE_LOOP_DB_URL": db_url}

    @asynccontextmanager
    async def setup_streaming_session(self) -> AsyncIterator[dict[str, str]]:
        """Session ``docs-stream``, started with ``stream_replies``."""
        db_url = self.fresh_db()
        await self.fresh_session("docs-stream")
        async with self.worker(db_url) as sessions:
            llm = LlmEndpoint(model="docs-stream", base_url=self.llm.base_url)
            runtime = RuntimeConfig(stream_replies=True)
            await sessions.start("docs-stream", SessionSettings(llm=llm, runtime=runtime))
            yield {"DURABLE_LOOP_DB_URL": db_url, "DOCS_SESSION_ID": "docs-stream"}

    @asynccontextmanager
    async def setup_typed_session(self) -> AsyncIterator[dict[str, str]]:
        """Session ``s1`` on a model that answers in prose until told the output schema."""
        db_url = self.fresh_db()
        await self.fresh_session("s1")
        async with self.worker(db_url) as sessions:
            llm = LlmEndpoint(model="docs-typed", base_url=self.llm.base_url)
            await sessions.start("s1", SessionSettings(llm=llm))
            yield {"DURABLE_LOOP_DB_URL": db_url}

    @asynccontextmanager
    async def setup_tool_approvals(self) -> AsyncIterator[dict[str, str]]:
        """Session ``s1`` whose message ``m1`` waits on two held ``pay`` calls:
        ``call_pay_1`` (250 to acme) and ``call_pay_2`` (5 to bob)."""
        db_url = self.fresh_db()
        await self.fresh_session("s1")
        async with self.worker(db_url, gated_pay=True) as sessions:
            llm = LlmEndpoint(model="docs-approvals", base_url=self.llm.base_url)
            # start, then send: update-with-start would answer a resent ``m1`` from the run
            # an earlier block left (terminated) instead of starting a new one
            await sessions.start("s1", SessionSettings(llm=llm))
            result = await sessions.send("s1", "Pay acme and bob", message_id="m1")
            assert result.status == "awaiting_approval", result
            yield {"DURABLE_LOOP_DB_URL": db_url}

    @asynccontextmanager
    async def setup_running_message(self) -> AsyncIterator[dict[str, str]]:
        """Session ``s1`` answering a slow message (one LLM call of a minute) right now."""
        db_url = self.fresh_db()
        await self.fresh_session("s1")
        async with self.worker(db_url) as sessions:
            llm = LlmEndpoint(model="docs-running", base_url=self.llm.base_url)
            await sessions.start("s1", SessionSettings(llm=llm))
            essay = asyncio.create_task(sessions.send("s1", "Write an essay about tides"))
            deadline = time.monotonic() + READY_TIMEOUT_S
            while (await sessions.status("s1")).state != "running":
                assert time.monotonic() < deadline, "the essay never started"
                await asyncio.sleep(0.05)
            try:
                yield {"DURABLE_LOOP_DB_URL": db_url}
            finally:
                await asyncio.wait({essay}, timeout=READY_TIMEOUT_S)
                essay.cancel()

    # ------------------------------------------------------------------ after the page

    async def close(self) -> dict[str, str]:
        """Terminate every session the page started; the replay failures of their runs."""
        async for execution in self.client.list_workflows():
            self.workflow_ids.add(execution.id)
        histories = []
        for workflow_id in sorted(self.workflow_ids):
            histories.extend(await fetch_histories(self.client, workflow_id))
            with contextlib.suppress(RPCError):
                await self.client.get_workflow_handle(workflow_id).terminate("docs test done")
        return await replay_failures(histories)
