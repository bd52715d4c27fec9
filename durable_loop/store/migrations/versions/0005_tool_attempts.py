"""tool_attempts: the marker an effect="once" tool's attempt writes before its body runs

Revision ID: 0005_tool_attempts
Revises: 0004_transcript_role_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_tool_attempts"
down_revision = "0004_transcript_role_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_attempts",
        sa.Column("idempotency_key", sa.String(400), primary_key=True),
        sa.Column("session_id", sa.String(200), nullable=False),
        sa.Column("call_id", sa.String(200), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column(
            "started_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )


def downgrade() -> None:
    op.drop_table("tool_attempts")
