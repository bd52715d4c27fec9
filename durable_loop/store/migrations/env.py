"""Alembic environment: runs on the connection handed over by ``engine.migrate``."""

from alembic import context

from durable_loop.store import workspace_schema  # noqa: F401  (registers tables)
from durable_loop.store.schema import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
