"""stream_chunks: assistant text as it streams from the provider, tailed by callers

Revision ID: 0003_stream_chunks
Revises: 0002_workspace
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_stream_chunks"
down_revision = "0002_workspace"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stream_chunks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(200), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.UniqueConstraint("session_id", "seq", "attempt", "idx", name="uq_stream_chunk"),
    )
    op.create_index("ix_stream_chunks_session_id", "stream_chunks", ["session_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_stream_chunks_session_id", table_name="stream_chunks")
    op.drop_table("stream_chunks")
