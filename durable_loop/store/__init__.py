"""The append-only transcript store (SQLAlchemy 2; SQLite by default, PostgreSQL at scale)."""

from durable_loop.store.engine import StoreConfig, open_store
from durable_loop.store.transcript import TranscriptStore

__all__ = ["StoreConfig", "TranscriptStore", "open_store"]
