"""A session's stored rows as plain values, to copy or move them whole: the transcript
(by row, with the original seqs and timestamps) and its workspace (facts, audit, settled
proposals). Used by fork, export and import; the runtime itself never calls it.

Rows are copied, not referenced: a transcript row belongs to one session id forever, and
everything that reads a transcript (the LLM activity, the trace, retention) reads by that
id. A reference would make the fork depend on the original staying in the same store,
which an export to another store breaks, and a later clean-up of the original would
silently empty the fork.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import BaseModel, Field, JsonValue
from sqlalchemy import Connection, Table, insert, literal, select

from durable_loop.core.messages import Message
from durable_loop.store.database import Database, insert_ignore
from durable_loop.store.transcript import TRANSCRIPT, message_json
from durable_loop.store.workspace_base import AUDIT, WS
from durable_loop.store.workspace_schema import ProposalRow

PROPOSALS = cast(Table, ProposalRow.__table__)
_TIMESTAMPS = ("created_at", "decided_at")


class RowCopy(BaseModel):
    """One transcript row as the store holds it (``message`` and ``meta`` parsed)."""

    seq: int
    role: str
    message: dict[str, JsonValue]
    meta: dict[str, JsonValue] = Field(default_factory=dict)
    created_at: datetime | None = None


class WorkspaceCopy(BaseModel):
    """A workspace whole: its document row, its audit log (oldest first, without the
    store's row ids) and its settled proposals. Columns keep their stored names; JSON
    columns are parsed."""

    facts: dict[str, JsonValue] = Field(default_factory=dict)
    draft: dict[str, JsonValue] = Field(default_factory=dict)
    locks: list[str] = Field(default_factory=list)
    version: int = 0
    facts_version: int = 0
    audit: list[dict[str, JsonValue | datetime]] = Field(default_factory=list)
    proposals: list[dict[str, JsonValue | datetime]] = Field(default_factory=list)


async def transcript_rows(db: Database, session_id: str) -> list[RowCopy]:
    query = select(TRANSCRIPT).where(TRANSCRIPT.c.session_id == session_id)

    def work(conn: Connection) -> list[RowCopy]:
        return [
            RowCopy(
                seq=r.seq,
                role=r.role,
                message=json.loads(r.message_json),
                meta=json.loads(r.meta_json or "{}"),
                created_at=utc(r.created_at),
            )
            for r in conn.execute(query.order_by(TRANSCRIPT.c.seq))
        ]

    return await db.read(work)


async def has_transcript(db: Database, session_id: str) -> bool:
    query = select(TRANSCRIPT.c.seq).where(TRANSCRIPT.c.session_id == session_id).limit(1)
    return await db.read(lambda conn: conn.execute(query).first() is not None, inline=True)


async def copy_transcript(db: Database, source: str, target: str, upto_seq: int) -> int:
    """Copy ``source``'s rows with seq < ``upto_seq`` to ``target`` in one statement (rows
    already at a seq of ``target`` stay); returns the rows copied."""
    cols = TRANSCRIPT.c
    rows = select(
        literal(target, TRANSCRIPT.c.session_id.type),
        cols.seq,
        cols.role,
        cols.message_json,
        cols.meta_json,
        cols.created_at,
    ).where(cols.session_id == source, cols.seq < upto_seq)
    names = ["session_id", "seq", "role", "message_json", "meta_json", "created_at"]
    # RETURNING counts on every dialect; psycopg reports no rowcount for INSERT ... SELECT
    statement = insert(TRANSCRIPT).from_select(names, rows).returning(TRANSCRIPT.c.seq)
    return await db.write(lambda conn: len(conn.execute(statement).all()))


async def write_transcript(db: Database, session_id: str, rows: list[RowCopy]) -> None:
    """Write rows at their seqs (a seq already held keeps its row), timestamps kept."""
    values = [
        {
            "session_id": session_id,
            "seq": row.seq,
            "role": row.role,
            "message_json": message_json(Message.model_validate(row.message)),
            "meta_json": json.dumps(row.meta, separators=(",", ":")),
            **({"created_at": row.created_at} if row.created_at is not None else {}),
        }
        for row in rows
    ]
    if values:
        statement = insert_ignore(TRANSCRIPT, db.engine.dialect.name)
        await db.write(lambda conn: conn.execute(statement, values))


_AUDIT_JSON = "value_json"
_PROPOSAL_JSON = ("change_set_json", "paths_json", "result_json")


async def workspace_copy(db: Database, workspace_id: str) -> WorkspaceCopy:
    def work(conn: Connection) -> WorkspaceCopy:
        doc = conn.execute(select(WS).where(WS.c.workspace_id == workspace_id)).first()
        audit = conn.execute(
            select(AUDIT).where(AUDIT.c.workspace_id == workspace_id).order_by(AUDIT.c.id)
        )
        proposals = conn.execute(
            select(PROPOSALS)
            .where(PROPOSALS.c.workspace_id == workspace_id, PROPOSALS.c.status != "pending")
            .order_by(PROPOSALS.c.created_at, PROPOSALS.c.proposal_id)
        )
        copy = WorkspaceCopy(
            audit=[_parsed(r._mapping, (_AUDIT_JSON,), drop=("id", "workspace_id")) for r in audit],
            proposals=[
                _parsed(r._mapping, _PROPOSAL_JSON, drop=("workspace_id",)) for r in proposals
            ],
        )
        if doc is None:
            return copy
        m = doc._mapping
        return copy.model_copy(
            update={
                "facts": json.loads(m["facts_json"]),
                "draft": json.loads(m["draft_json"]),
                "locks": json.loads(m["locks_json"]),
                "version": m["version"],
                "facts_version": m["facts_version"],
            }
        )

    return await db.read(work)


async def write_workspace(db: Database, workspace_id: str, copy: WorkspaceCopy) -> None:
    """Create ``workspace_id`` holding ``copy``; refuses (IntegrityError) an existing one.
    A settled proposal whose id the store already holds (the original's, in a fork) is
    left out: its decision stays in the copied audit."""
    doc = {
        "workspace_id": workspace_id,
        "facts_json": json.dumps(copy.facts, sort_keys=True, separators=(",", ":")),
        "draft_json": json.dumps(copy.draft, sort_keys=True, separators=(",", ":")),
        "locks_json": json.dumps(copy.locks, separators=(",", ":")),
        "version": copy.version,
        "facts_version": copy.facts_version,
    }
    audit = [_stored(row, (_AUDIT_JSON,), workspace_id) for row in copy.audit]
    proposals = [_stored(row, _PROPOSAL_JSON, workspace_id) for row in copy.proposals]

    def work(conn: Connection) -> None:
        conn.execute(insert(WS), [doc])
        if audit:
            conn.execute(insert(AUDIT), audit)
        if proposals:  # ids are global: a proposal this store has (a fork's) stays its own
            conn.execute(insert_ignore(PROPOSALS, conn.dialect.name), proposals)

    await db.write(work)


def _parsed(
    mapping: Any, json_columns: tuple[str, ...], *, drop: tuple[str, ...]
) -> dict[str, JsonValue | datetime]:
    out: dict[str, JsonValue | datetime] = {}
    for key, value in mapping.items():
        if key in drop:
            continue
        if key in json_columns:
            out[key.removesuffix("_json")] = None if value is None else json.loads(value)
        else:
            out[key] = utc(value) if isinstance(value, datetime) else value
    return out


def utc(value: datetime | None) -> datetime | None:
    """A stored timestamp as an aware UTC one: SQLite hands back the naive UTC it stored,
    PostgreSQL an aware one, and a bundle reads the same from either."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _stored(
    row: dict[str, JsonValue | datetime], json_columns: tuple[str, ...], workspace_id: str
) -> dict[str, object]:
    out: dict[str, object] = {"workspace_id": workspace_id}
    for key, value in row.items():
        column = f"{key}_json"
        if column in json_columns:
            out[column] = None if value is None else json.dumps(value, separators=(",", ":"))
        elif key in _TIMESTAMPS and isinstance(value, str):
            out[key] = datetime.fromisoformat(value)
        else:
            out[key] = value
    return out
