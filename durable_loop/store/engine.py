"""Engines for the store: URL handling, SQLite tuning and migrations on start."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from durable_loop.core.extras import import_extra
from durable_loop.store.database import tune_sqlite
from durable_loop.store.transcript import TranscriptStore

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
MIGRATION_LOCK_ID = 7_243_001


@dataclass(frozen=True)
class StoreConfig:
    url: str

    def __post_init__(self) -> None:
        _urls(self.url)  # an unsupported URL or a missing driver fails here, before any I/O

    @classmethod
    def sqlite_file(cls, path: Path) -> StoreConfig:
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(url=f"sqlite:///{path}")


def _urls(url: str) -> tuple[URL, URL]:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite"), parsed.set(drivername="sqlite+aiosqlite")
    if backend == "postgresql":
        import_extra("psycopg", "the PostgreSQL store")
        return (
            parsed.set(drivername="postgresql+psycopg"),
            parsed.set(drivername="postgresql+psycopg"),
        )
    raise ValueError(
        f"unsupported store URL {url!r}: use sqlite:///PATH or postgresql://USER@HOST/DB"
    )


@contextlib.contextmanager
def _sqlite_migration_lock(database: str) -> Iterator[None]:
    """Processes migrating one SQLite file take turns: SQLite begins its transaction only
    at the first write, so two first starts would both see no schema and both create it
    (PostgreSQL takes an advisory lock instead)."""
    with open(f"{os.path.abspath(database)}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def migrate(url: str) -> None:
    """Bring the schema to the newest revision (idempotent; safe on every start, also
    when several processes start at once)."""
    sync_url, _ = _urls(url)
    database = sync_url.database
    if sync_url.get_backend_name() == "sqlite" and database and database != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(database)), exist_ok=True)
        with _sqlite_migration_lock(database):
            _upgrade(sync_url)
    else:
        _upgrade(sync_url)


def _upgrade(sync_url: URL) -> None:
    engine = create_engine(sync_url)
    if sync_url.get_backend_name() == "sqlite":
        event.listen(engine, "connect", tune_sqlite)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    try:
        with engine.begin() as connection:
            if sync_url.get_backend_name() == "postgresql":
                # Workers (and tests) starting together must not run the DDL concurrently.
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})")
            cfg.attributes["connection"] = connection
            command.upgrade(cfg, "head")
    finally:
        engine.dispose()


def async_engine(url: str) -> AsyncEngine:
    _, async_url = _urls(url)
    if async_url.get_backend_name() == "sqlite":
        engine = create_async_engine(async_url, connect_args={"timeout": 30})
        event.listen(engine.sync_engine, "connect", tune_sqlite)
        return engine
    return create_async_engine(async_url, pool_size=10, max_overflow=20, pool_pre_ping=True)


def open_store(config: StoreConfig) -> TranscriptStore:
    """Migrate, then return a store bound to an async engine."""
    migrate(config.url)
    return TranscriptStore(async_engine(config.url))
