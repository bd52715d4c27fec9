"""workspace: facts, draft, locks, ui_state, proposals and the append-only audit log

Revision ID: 0002_workspace
Revises: 0001_transcript
"""

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0002_workspace"
down_revision = "0001_transcript"
branch_labels = None
depends_on = None


def _now(name: str = "created_at") -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("workspace_id", sa.String(200), primary_key=True),
        sa.Column("facts_json", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("draft_json", sa.Text(), nullable=False, server_default="{}"),
        sa.Column("locks_json", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("ui_state_json", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("facts_version", sa.Integer(), nullable=False, server_default="0"),
        _now(),
        _now("updated_at"),
    )
    op.create_table(
        "workspace_proposals",
        sa.Column("proposal_id", sa.String(200), primary_key=True),
        sa.Column("workspace_id", sa.String(200), nullable=False, index=True),
        sa.Column("session_id", sa.String(200), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=True),
        sa.Column("call_id", sa.String(200), nullable=True),
        sa.Column("change_set_json", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.String(80), nullable=False),
        sa.Column("paths_json", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        _now(),
    )
    op.create_table(
        "workspace_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("workspace_id", sa.String(200), nullable=False, index=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(16), nullable=False),
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("path", sa.Text(), nullable=False, server_default=""),
        sa.Column("value_json", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("actor_kind", sa.String(16), nullable=False),
        sa.Column("session_id", sa.String(200), nullable=True),
        sa.Column("turn", sa.Integer(), nullable=True),
        sa.Column("call_id", sa.String(200), nullable=True),
        sa.Column("proposal_id", sa.String(200), nullable=True, index=True),
        sa.Column("comment", sa.Text(), nullable=True),
        _now(),
    )
    op.create_table(
        "workspace_writes",
        sa.Column("idempotency_key", sa.String(300), primary_key=True),
        sa.Column("workspace_id", sa.String(200), nullable=False),
        sa.Column("result_json", sa.Text(), nullable=False),
        _now(),
    )


def downgrade() -> None:
    op.drop_table("workspace_writes")
    op.drop_table("workspace_audit")
    op.drop_table("workspace_proposals")
    op.drop_table("workspaces")
