"""Tool sources a worker loads besides its Python registry, and the tool worker pools.

* ``DURABLE_LOOP_ENSEMBLES``: ensemble descriptor files or directories (comma separated);
  see :mod:`durable_loop.tools.ensembles.descriptors`.
* ``DURABLE_LOOP_MCP_CONFIG``: an MCP servers file (:mod:`durable_loop.tools.mcp.config`); the
  worker owns the connections and closes them on shutdown. Secrets referenced there as
  ``${NAME}`` come from this worker's environment.

Tools placed on another task queue (long-running ones, or an ensemble's ``task_queue``)
are served by :func:`tool_worker_pools`, one tool-only worker per queue.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client

from durable_loop.core.names import long_running_queue
from durable_loop.core.registry import ToolRegistry
from durable_loop.tools.ensembles import load_ensemble_dir, load_ensembles, registry_from
from durable_loop.tools.mcp import McpPool, load_mcp_config, mcp_registry
from durable_loop.worker.builder import WorkerDeps, WorkerTuning, build_tool_worker

ENSEMBLES_ENV = "DURABLE_LOOP_ENSEMBLES"
MCP_CONFIG_ENV = "DURABLE_LOOP_MCP_CONFIG"


@dataclass
class LoadedTools:
    registry: ToolRegistry
    pool: McpPool | None = None
    mcp_names: dict[str, tuple[str, str]] = field(default_factory=dict)

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()


def _paths(value: str) -> list[Path]:
    return [Path(part.strip()) for part in value.split(",") if part.strip()]


async def load_tool_sources(registry: ToolRegistry, environ: Mapping[str, str]) -> LoadedTools:
    """Add the configured ensembles and MCP servers to ``registry`` (in place)."""
    for path in _paths(environ.get(ENSEMBLES_ENV, "")):
        ensembles = load_ensemble_dir(path) if path.is_dir() else load_ensembles([path])
        registry_from(ensembles, base=registry)
    config = environ.get(MCP_CONFIG_ENV, "").strip()
    if not config:
        return LoadedTools(registry)
    pool = McpPool(load_mcp_config(config), environ)
    try:
        _, names = await mcp_registry(pool, base=registry)
    except BaseException:
        await pool.close()
        raise
    return LoadedTools(registry, pool, names)


def tool_queues(registry: ToolRegistry, task_queue: str) -> list[str]:
    """Task queues, other than the session queue, that this registry's tools run on."""
    queues: list[str] = []
    for spec in registry.specs():
        if spec.local:
            continue
        queue = spec.task_queue or (long_running_queue(task_queue) if spec.long_running else None)
        if queue and queue != task_queue and queue not in queues:
            queues.append(queue)
    return queues


@asynccontextmanager
async def tool_worker_pools(
    client: Client, deps: WorkerDeps, task_queue: str, tuning: WorkerTuning | None = None
) -> AsyncIterator[list[str]]:
    """Run one tool-only worker per extra queue for as long as the context is open."""
    queues = tool_queues(deps.registry, task_queue)
    async with AsyncExitStack() as stack:
        for queue in queues:
            await stack.enter_async_context(
                build_tool_worker(client, deps, task_queue=queue, tuning=tuning)
            )
        yield queues
