"""transcript messages

Revision ID: 0001_transcript
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_transcript"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "transcript_messages",
        sa.Column("session_id", sa.String(200), primary_key=True),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("message_json", sa.Text(), nullable=False),
        sa.Column("meta_json", sa.Text(), nullable=False, server_default="{}"),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )


def downgrade() -> None:
    op.drop_table("transcript_messages")
