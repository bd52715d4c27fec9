"""transcript_messages: index by (session, role, seq)

A windowed LLM turn looks up the newest stored summary (``role = 'system'``) below the
oldest message it keeps; without this index that lookup scanned every row of the session.

Revision ID: 0004_transcript_role_index
Revises: 0003_stream_chunks
"""

from alembic import op

revision = "0004_transcript_role_index"
down_revision = "0003_stream_chunks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_transcript_messages_session_role_seq",
        "transcript_messages",
        ["session_id", "role", "seq"],
    )


def downgrade() -> None:
    op.drop_index("ix_transcript_messages_session_role_seq", table_name="transcript_messages")
