"""Workspace tables: current state, proposals, the append-only audit log, idempotent writes.

Migration ``0002_workspace`` creates them; these classes are the query-side definitions.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, String, Text, func
from sqlalchemy.orm import Mapped, mapped_column

from durable_loop.store.schema import Base


class WorkspaceRow(Base):
    """One workspace: JSON documents plus ``version`` (any change) and ``facts_version``."""

    __tablename__ = "workspaces"

    workspace_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    facts_json: Mapped[str] = mapped_column(Text, default="{}")
    draft_json: Mapped[str] = mapped_column(Text, default="{}")
    locks_json: Mapped[str] = mapped_column(Text, default="[]")
    ui_state_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    facts_version: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ProposalRow(Base):
    """A proposed facts change set; settled once (the commit is keyed by ``proposal_id``)."""

    __tablename__ = "workspace_proposals"

    proposal_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(200), index=True)
    session_id: Mapped[str] = mapped_column(String(200))
    turn: Mapped[int | None] = mapped_column(Integer, nullable=True)
    call_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    change_set_json: Mapped[str] = mapped_column(Text)
    fingerprint: Mapped[str] = mapped_column(String(80))
    paths_json: Mapped[str] = mapped_column(Text, default="[]")
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    base_version: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    decided_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    result_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class AuditRow(Base):
    """Who or what changed which path, in which session, turn and proposal; never updated."""

    __tablename__ = "workspace_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workspace_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[int] = mapped_column(Integer)
    target: Mapped[str] = mapped_column(String(16))
    op: Mapped[str] = mapped_column(String(16))
    path: Mapped[str] = mapped_column(Text, default="")
    value_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    actor: Mapped[str] = mapped_column(String(200))
    actor_kind: Mapped[str] = mapped_column(String(16))
    session_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    turn: Mapped[int | None] = mapped_column(Integer, nullable=True)
    call_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    proposal_id: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class WriteRow(Base):
    """The result of a keyed write, so a retried tool call returns it instead of re-applying."""

    __tablename__ = "workspace_writes"

    idempotency_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(200))
    result_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
