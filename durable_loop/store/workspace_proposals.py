"""Facts proposals in the store: recorded when the model proposes, settled once by a person.

Settling is keyed by the proposal id inside one transaction (status check, facts write,
audit rows, status update), so settling the same proposal twice, also after a worker crash
between the write and the reply, returns the first outcome and writes nothing.

Concurrent proposals: a proposal remembers the workspace version it was made at. It commits
only if no facts change since then touched an overlapping path (equal, ancestor or
descendant pointer; a change to a list element counts as a change to the list). Otherwise
it settles as ``conflict`` and nothing is written: the model is told to propose again.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import cast

from pydantic import JsonValue
from sqlalchemy import Connection, Table, bindparam, func, insert, select, update

from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.proposals import ProposalNotice, ProposedChange, SettleInput, SettleOutput
from durable_loop.core.workspace_patch import (
    WorkspaceError,
    apply_ops,
    change_set_fingerprint,
    normalize_ops,
    overlaps,
    parent,
    tokens,
)
from durable_loop.store.workspace import WorkspaceStore, audit_entries
from durable_loop.store.workspace_base import AUDIT, ChangeSource, StaleWrite, retrying
from durable_loop.store.workspace_schema import ProposalRow

PROPOSALS = cast(Table, ProposalRow.__table__)
PROPOSAL = select(PROPOSALS).where(PROPOSALS.c.proposal_id == bindparam("proposal_id"))


class ProposalRecord(ProposedChange):
    """A proposal as the workspace store keeps it, decided or not."""

    session_id: str
    turn: int | None = None
    call_id: str | None = None
    base_version: int
    status: str
    decided_by: str | None = None
    comment: str | None = None
    decided_at: datetime | None = None
    created_at: datetime | None = None


def _record(row: object) -> ProposalRecord:
    m = dict(row._mapping)  # type: ignore[attr-defined]
    changes = json.loads(m.pop("change_set_json"))
    paths = json.loads(m.pop("paths_json"))
    m.pop("result_json", None)
    return ProposalRecord(changes=changes, paths=paths, **m)


def _notice(record: ProposalRecord) -> ProposalNotice:
    return ProposalNotice.model_validate(record, from_attributes=True)


def _widened(path: str) -> str:
    """A list element path stands for the whole list (inserts and removals shift indexes)."""
    parts = tokens(path)
    return parent(path) if parts and (parts[-1] == "-" or parts[-1].isdigit()) else path


def _overlapping(a: str, b: str) -> bool:
    return overlaps(_widened(a), _widened(b))


def _row(conn: Connection, proposal_id: str, *, lock: bool = False) -> object | None:
    query = PROPOSAL.with_for_update() if lock and conn.dialect.name == "postgresql" else PROPOSAL
    return conn.execute(query, {"proposal_id": proposal_id}).first()


async def get_proposal(store: WorkspaceStore, proposal_id: str) -> ProposalRecord | None:
    row = await store.db.read(lambda conn: _row(conn, proposal_id), inline=True)
    return _record(row) if row else None


async def list_proposals(store: WorkspaceStore, workspace_id: str) -> list[ProposalRecord]:
    query = select(PROPOSALS).where(PROPOSALS.c.workspace_id == workspace_id)
    rows = await store.db.read(
        lambda conn: conn.execute(query.order_by(PROPOSALS.c.created_at)).all()
    )
    return [_record(r) for r in rows]


async def propose(
    store: WorkspaceStore,
    workspace_id: str,
    raw_ops: object,
    source: ChangeSource,
    *,
    proposal_id: str,
    summary: str | None = None,
) -> ProposalNotice:
    """Record a proposal (validated against the current facts and locks; facts unchanged)."""
    ops = normalize_ops(raw_ops, store.limits)

    def attempt(conn: Connection) -> ProposalNotice:
        existing = _row(conn, proposal_id)
        if existing is not None:
            return _notice(_record(existing))
        read = store.load(conn, workspace_id)
        applied = apply_ops(read.facts, ops, locks=read.locks, limits=store.limits, label="facts")
        notice = ProposalNotice(
            proposal_id=proposal_id,
            workspace_id=workspace_id,
            changes=ops,
            fingerprint=change_set_fingerprint(workspace_id, ops),
            paths=applied.paths,
            summary=summary,
            base_version=read.version,
        )
        conn.execute(
            insert(PROPOSALS),
            [
                {
                    "proposal_id": proposal_id,
                    "workspace_id": workspace_id,
                    "session_id": source.session_id or "",
                    "turn": source.turn,
                    "call_id": source.call_id,
                    "change_set_json": json.dumps(ops),
                    "fingerprint": notice.fingerprint,
                    "paths_json": json.dumps(notice.paths),
                    "summary": summary,
                    "base_version": read.version,
                    "status": "pending",
                }
            ],
        )
        proposer = ChangeSource(**{**source.__dict__, "proposal_id": proposal_id})
        entries: list[tuple[str, str, str, JsonValue]] = [
            ("proposal", "propose", path, None) for path in notice.paths
        ]
        store.record(conn, workspace_id, read.version, proposer, entries)
        return notice

    return await retrying(lambda: store.db.write(attempt, inline=True))


async def settle(store: WorkspaceStore, inp: SettleInput) -> SettleOutput:
    """Confirm (commit), reject or expire a proposal exactly once, naming who decided."""
    if not inp.actor.strip():
        return _failed(inp, ErrorCode.INVALID_DECISION, "the approver's identity is required")
    if "\x00" in inp.actor + (inp.comment or ""):
        return _failed(
            inp, ErrorCode.INVALID_DECISION, "the approver or comment contains a NUL character"
        )
    written: list[SettleOutput] = []

    def attempt(conn: Connection) -> SettleOutput:
        row = _row(conn, inp.proposal_id, lock=True)
        if row is None:
            return _failed(inp, ErrorCode.UNKNOWN_PROPOSAL, f"no proposal {inp.proposal_id!r}")
        record = _record(row)
        if record.status != "pending":
            stored = row._mapping["result_json"]  # type: ignore[attr-defined]
            out = SettleOutput.model_validate_json(stored)
            return out.model_copy(update={"already_settled": True})
        if record.fingerprint != inp.fingerprint:
            return _failed(inp, ErrorCode.FINGERPRINT_MISMATCH, "the fingerprint does not match")
        source = ChangeSource(
            actor=inp.actor,
            actor_kind="system" if inp.verdict == "expire" else "human",
            session_id=inp.session_id,
            turn=record.turn,
            call_id=record.call_id,
            proposal_id=record.proposal_id,
            comment=inp.comment,
        )
        if inp.verdict == "confirm":
            out = _commit(store, conn, record, source)
        else:
            status = "rejected" if inp.verdict == "reject" else "expired"
            out = SettleOutput(proposal_id=record.proposal_id, status=status)
            read = store.load(conn, record.workspace_id)
            entry = ("proposal", inp.verdict, "", None)
            store.record(conn, record.workspace_id, read.version, source, [entry])
        done = conn.execute(
            update(PROPOSALS)
            .where(PROPOSALS.c.proposal_id == record.proposal_id, PROPOSALS.c.status == "pending")
            .values(
                status=out.status,
                decided_by=inp.actor,
                comment=inp.comment,
                decided_at=func.now(),
                result_json=out.model_dump_json(),
            )
        )
        if done.rowcount != 1:
            raise StaleWrite(record.proposal_id)
        written.append(out)
        return out

    out = await retrying(lambda: store.db.write(attempt, inline=True))
    if store.on_settled is not None and written:
        await store.on_settled(out)
    return out


def _failed(inp: SettleInput, code: ErrorCode, message: str) -> SettleOutput:
    error = CodedError(code=code, message=message)
    return SettleOutput(proposal_id=inp.proposal_id, status="failed", error=error)


def _clashes(conn: Connection, record: ProposalRecord) -> list[str]:
    """Facts paths changed since the proposal was made that overlap the paths it touches:
    a confirmation could only end in a conflict."""
    changed = conn.execute(
        select(AUDIT.c.path, AUDIT.c.value_json).where(
            AUDIT.c.workspace_id == record.workspace_id,
            AUDIT.c.target == "facts",
            AUDIT.c.version > record.base_version,
        )
    )
    later: set[str] = set()
    for path, value_json in changed:
        later.add(path)
        value = json.loads(value_json) if value_json else None
        if isinstance(value, dict) and isinstance(value.get("from"), str) and len(value) == 1:
            later.add(value["from"])
    return sorted(p for p in later if any(_overlapping(p, q) for q in record.paths))


async def proposal_conflicts(store: WorkspaceStore, proposal_id: str) -> list[str]:
    """The clashing paths of a pending proposal (empty: it can still commit)."""

    def work(conn: Connection) -> list[str]:
        row = _row(conn, proposal_id)
        return _clashes(conn, _record(row)) if row else []

    return await store.db.read(work, inline=True)


def _commit(
    store: WorkspaceStore, conn: Connection, record: ProposalRecord, source: ChangeSource
) -> SettleOutput:
    read = store.load(conn, record.workspace_id)
    clashes = _clashes(conn, record)
    outcome: SettleOutput
    if clashes:
        error = CodedError(
            code=ErrorCode.CONFLICT,
            message=f"facts at {', '.join(clashes)} changed after this proposal was made; "
            "nothing was committed. Read the facts again and propose anew if still needed.",
        )
        outcome = SettleOutput(proposal_id=record.proposal_id, status="conflict", error=error)
        entry = ("proposal", "conflict", "", None)
        store.record(conn, record.workspace_id, read.version, source, [entry])
        return outcome
    try:
        applied = apply_ops(
            read.facts, record.changes, locks=read.locks, limits=store.limits, label="facts"
        )
    except WorkspaceError as err:
        error = err.as_value()
        store.record(
            conn, record.workspace_id, read.version, source, [("proposal", "fail", "", None)]
        )
        return SettleOutput(proposal_id=record.proposal_id, status="failed", error=error)
    new = read.model_copy(update={"facts": applied.document})
    saved = store.save(conn, read, new, facts_changed=True)
    entries = [*audit_entries("facts", record.changes), ("proposal", "confirm", "", None)]
    store.record(conn, record.workspace_id, saved.version, source, entries)
    return SettleOutput(
        proposal_id=record.proposal_id, status="committed", facts_version=saved.facts_version
    )
