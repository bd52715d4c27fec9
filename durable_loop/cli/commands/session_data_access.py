"""What ``fork``, ``export`` and ``import`` share: a :class:`SessionData` on the Temporal
client and store the flags and environment name, and their refusals as CLI errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from durable_loop.client.session_data import SessionData
    from durable_loop.worker.settings import WorkerSettings

T = TypeVar("T")


async def with_session_data(
    settings: WorkerSettings,
    work: Callable[[SessionData], Awaitable[T]],
    *,
    create_store: bool = False,
) -> T:
    """Run ``work``; ``create_store``: create (migrate) the store if needed, else refuse a
    local SQLite file that is not there (STORE_NOT_FOUND)."""
    from durable_loop.cli.errors import CliError
    from durable_loop.client.connect import connect
    from durable_loop.client.session_data import SessionData
    from durable_loop.client.sessions import SessionClient
    from durable_loop.client.trace.fetch import require_store
    from durable_loop.core.errors import DurableLoopError
    from durable_loop.store import StoreConfig, TranscriptStore
    from durable_loop.store.engine import async_engine, open_store

    if create_store:
        store = open_store(StoreConfig(url=settings.db_url))
    else:
        try:
            require_store(settings.db_url)
        except DurableLoopError as err:
            raise CliError(err.code, f"no transcript store at {err.message}") from None
        store = TranscriptStore(async_engine(settings.db_url))
    try:
        client = await connect(settings.temporal)
        sessions = SessionClient(client, task_queue=settings.task_queue)
        try:
            return await work(SessionData(sessions, store.db))
        except DurableLoopError as err:
            if isinstance(err, CliError):
                raise
            raise CliError(err.code, err.message) from None
    finally:
        await store.close()
