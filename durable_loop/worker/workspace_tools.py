"""``--tools durable_loop.worker.workspace_tools:registry``: the opt-in workspace tool set
(``state_get``, ``state_patch``, ``facts_propose``) on the worker's own store."""

from __future__ import annotations

from durable_loop.core.registry import ToolRegistry
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.tools.workspace import workspace_tools
from durable_loop.worker.settings import WorkerSettings


def registry() -> ToolRegistry:
    """Workspace tools on the store named by DURABLE_LOOP_DB_URL (the worker's default)."""
    settings = WorkerSettings.load()
    return workspace_tools(open_workspace_store(StoreConfig(url=settings.db_url)))
