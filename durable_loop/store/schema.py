"""Table definitions. Alembic migrations under ``migrations/`` create and evolve them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Index, Integer, String, Text, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class TranscriptRow(Base):
    """One canonical message of a session, addressed by (session_id, seq); never updated."""

    __tablename__ = "transcript_messages"
    __table_args__ = (
        Index("ix_transcript_messages_session_role_seq", "session_id", "role", "seq"),
    )

    session_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    role: Mapped[str] = mapped_column(String(16))
    message_json: Mapped[str] = mapped_column(Text)
    meta_json: Mapped[str] = mapped_column(Text, default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
