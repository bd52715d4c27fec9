"""The workspace store: versioned writes, locks, audit, proposals settled exactly once."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio

from durable_loop.core.proposals import SettleInput
from durable_loop.core.workspace_patch import WorkspaceError
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import ChangeSource, open_workspace_store
from durable_loop.store.workspace_proposals import get_proposal, propose, settle
from tests.conftest import unique

MODEL = ChangeSource(actor="model", actor_kind="model", session_id="s1", turn=1, call_id="c1")
ALICE = ChangeSource(actor="alice", actor_kind="human")


@pytest_asyncio.fixture
async def store(store_url):
    ws = open_workspace_store(StoreConfig(url=store_url))
    yield ws
    await ws.close()


def confirm(notice, actor="alice", comment=None) -> SettleInput:
    return SettleInput(
        proposal_id=notice.proposal_id,
        workspace_id=notice.workspace_id,
        fingerprint=notice.fingerprint,
        verdict="confirm",
        actor=actor,
        comment=comment,
        session_id="s1",
    )


async def test_draft_patch_is_versioned_and_audited(store):
    wid = unique("w")
    await store.create(wid, draft={"title": "a", "tags": []})
    result = await store.apply(
        wid,
        "draft",
        [
            {"op": "replace", "path": "/title", "value": "b"},
            {"op": "add", "path": "/tags/-", "value": "x"},
        ],
        MODEL,
    )
    snap = await store.snapshot(wid)
    assert snap.draft == {"title": "b", "tags": ["x"]}
    assert (result.version, snap.version, snap.facts_version) == (2, 2, 0)
    assert result.paths == ["/title", "/tags"]
    audit = await store.audit(wid)
    assert [(a.target, a.op, a.path, a.value, a.actor, a.turn) for a in audit[1:]] == [
        ("draft", "replace", "/title", "b", "model", 1),
        ("draft", "add", "/tags/-", "x", "model", 1),
    ]
    assert all(a.version == 2 and a.session_id == "s1" for a in audit[1:])


async def test_stale_version_is_refused_not_merged(store):
    wid = unique("w")
    await store.create(wid, draft={"n": 1})
    await store.apply(wid, "draft", [{"op": "replace", "path": "/n", "value": 2}], MODEL)
    with pytest.raises(WorkspaceError) as err:
        await store.apply(
            wid, "draft", [{"op": "replace", "path": "/n", "value": 3}], MODEL, expected_version=1
        )
    assert err.value.code == "STALE_VERSION"
    assert (await store.snapshot(wid)).draft == {"n": 2}


async def test_concurrent_writers_each_apply_once_in_sequence(store):
    wid = unique("w")
    await store.create(wid, draft={"items": []})
    ops = [[{"op": "add", "path": "/items/-", "value": i}] for i in range(6)]
    await asyncio.gather(*(store.apply(wid, "draft", o, MODEL) for o in ops))
    snap = await store.snapshot(wid)
    assert sorted(snap.draft["items"]) == list(range(6))
    assert snap.version == 7


async def test_keyed_write_is_applied_once(store):
    wid = unique("w")
    await store.create(wid, draft={"items": []})
    keyed = ChangeSource(actor="model", actor_kind="model", idempotency_key=unique("k"))
    op = [{"op": "add", "path": "/items/-", "value": 1}]
    first = await store.apply(wid, "draft", op, keyed)
    again = await store.apply(wid, "draft", op, keyed)
    assert first == again
    assert (await store.snapshot(wid)).draft == {"items": [1]}


@pytest.mark.parametrize(
    ("ops", "code"),
    [
        ([{"op": "replace", "path": "/missing", "value": 1}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/title/x", "value": 1}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/n/0", "value": 1}], "INVALID_ARGS"),
        ([{"op": "frobnicate", "path": "/n"}], "INVALID_ARGS"),
        ([{"op": "add", "path": "title", "value": 1}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/x", "value": float("nan")}], "INVALID_ARGS"),
        ([{"op": "replace", "path": "", "value": {}}], "LOCKED"),
        ([{"op": "replace", "path": "/locked", "value": 1}], "LOCKED"),
        ([{"op": "test", "path": "/n", "value": 5}], "INVALID_ARGS"),
        ([{"op": "add", "path": "/big", "value": "x" * 70_000}], "ARGUMENTS_TOO_LARGE"),
        ([{"op": "add", "path": f"/k{i}", "value": i} for i in range(101)], "ARGUMENTS_TOO_LARGE"),
    ],
)
async def test_bad_change_sets_change_nothing(store, ops, code):
    wid = unique("w")
    await store.create(wid, draft={"title": "t", "n": 5, "locked": 0}, locks=["/locked"])
    # A valid first op proves nothing is half-applied when a later op fails.
    with pytest.raises(WorkspaceError) as err:
        await store.apply(wid, "draft", [{"op": "replace", "path": "/n", "value": 6}, *ops], MODEL)
    assert err.value.code == code, err.value.message
    snap = await store.snapshot(wid)
    assert snap.draft == {"title": "t", "n": 5, "locked": 0}
    assert snap.version == 1
    assert len(await store.audit(wid)) == 1


async def test_documents_stay_objects(store):
    wid = unique("w")
    await store.create(wid, draft={"n": 1})
    for op in ({"op": "replace", "path": "", "value": [1]}, {"op": "remove", "path": ""}):
        with pytest.raises(WorkspaceError) as err:
            await store.apply(wid, "draft", [op], MODEL)
        assert err.value.code == "INVALID_ARGS", err.value.message
    assert (await store.snapshot(wid)).draft == {"n": 1}


async def test_locks_cover_ancestors_and_descendants(store):
    wid = unique("w")
    await store.create(wid, draft={"a": {"b": 1, "c": 2}, "list": [1, 2]})
    await store.set_lock(wid, "/a/b", ALICE)
    await store.set_lock(wid, "/list/1", ALICE)
    for op in (
        {"op": "replace", "path": "/a", "value": {}},
        {"op": "remove", "path": "/a/b"},
        {"op": "add", "path": "/a/b/deeper", "value": 1},
        {"op": "add", "path": "/list/0", "value": 0},
        {"op": "move", "from": "/a/b", "path": "/z"},
    ):
        with pytest.raises(WorkspaceError) as err:
            await store.apply(wid, "draft", [op], MODEL)
        assert err.value.code == "LOCKED", op
    await store.apply(wid, "draft", [{"op": "replace", "path": "/a/c", "value": 3}], MODEL)
    await store.set_lock(wid, "/a/b", ALICE, locked=False)
    await store.apply(wid, "draft", [{"op": "remove", "path": "/a/b"}], MODEL)
    audit = [(a.target, a.op, a.path, a.actor) for a in await store.audit(wid)]
    assert ("locks", "unlock", "/a/b", "alice") in audit


async def test_proposal_commits_once_and_is_audited(store):
    wid = unique("w")
    await store.create(wid, facts={"title": "old"})
    notice = await propose(
        store,
        wid,
        [{"op": "replace", "path": "/title", "value": "new"}],
        MODEL,
        proposal_id=unique("p"),
    )
    assert (await store.snapshot(wid)).facts == {"title": "old"}
    first = await settle(store, confirm(notice, comment="ok"))
    second = await settle(store, confirm(notice, comment="again"))
    assert (first.status, first.facts_version, first.already_settled) == ("committed", 1, False)
    assert (second.status, second.facts_version, second.already_settled) == ("committed", 1, True)
    snap = await store.snapshot(wid)
    assert snap.facts == {"title": "new"} and snap.facts_version == 1
    facts_rows = [a for a in await store.audit(wid) if a.target == "facts"]
    assert [
        (a.op, a.path, a.actor, a.actor_kind, a.comment, a.proposal_id) for a in facts_rows
    ] == [("replace", "/title", "alice", "human", "ok", notice.proposal_id)]
    record = await get_proposal(store, notice.proposal_id)
    assert record is not None and record.status == "committed" and record.decided_by == "alice"


async def test_overlapping_proposal_goes_stale_when_another_commits(store):
    wid = unique("w")
    await store.create(wid, facts={"title": "t", "tags": ["a"], "body": "b"})
    title_1 = await propose(
        store,
        wid,
        [{"op": "replace", "path": "/title", "value": "one"}],
        MODEL,
        proposal_id=unique("p"),
    )
    title_2 = await propose(
        store,
        wid,
        [{"op": "replace", "path": "/title", "value": "two"}],
        MODEL,
        proposal_id=unique("p"),
    )
    body = await propose(
        store,
        wid,
        [{"op": "replace", "path": "/body", "value": "B"}],
        MODEL,
        proposal_id=unique("p"),
    )
    tag = await propose(
        store,
        wid,
        [{"op": "replace", "path": "/tags/0", "value": "z"}],
        MODEL,
        proposal_id=unique("p"),
    )
    appended = await propose(
        store, wid, [{"op": "add", "path": "/tags/-", "value": "c"}], MODEL, proposal_id=unique("p")
    )
    assert (await settle(store, confirm(title_1))).status == "committed"
    stale = await settle(store, confirm(title_2))
    assert stale.status == "conflict" and stale.error and stale.error.code == "CONFLICT"
    assert (await settle(store, confirm(body))).status == "committed"
    assert (await settle(store, confirm(appended))).status == "committed"
    assert (await settle(store, confirm(tag))).status == "conflict"
    assert (await store.snapshot(wid)).facts == {"title": "one", "tags": ["a", "c"], "body": "B"}


async def test_proposals_respect_locks_at_proposal_and_commit_time(store):
    wid = unique("w")
    await store.create(wid, facts={"name": "n", "age": 1}, locks=["/name"])
    with pytest.raises(WorkspaceError) as err:
        await propose(
            store,
            wid,
            [{"op": "replace", "path": "/name", "value": "x"}],
            MODEL,
            proposal_id=unique("p"),
        )
    assert err.value.code == "LOCKED"
    notice = await propose(
        store, wid, [{"op": "replace", "path": "/age", "value": 2}], MODEL, proposal_id=unique("p")
    )
    await store.set_lock(wid, "/age", ALICE)
    out = await settle(store, confirm(notice))
    assert out.status == "failed" and out.error and out.error.code == "LOCKED"
    assert (await store.snapshot(wid)).facts == {"name": "n", "age": 1}


async def test_reject_and_expire_record_the_decision(store):
    wid = unique("w")
    op = [{"op": "add", "path": "/x", "value": 1}]
    p1 = await propose(store, wid, op, MODEL, proposal_id=unique("p"))
    p2 = await propose(store, wid, op, MODEL, proposal_id=unique("p"))
    rejected = await settle(
        store, confirm(p1, actor="bob", comment="no").model_copy(update={"verdict": "reject"})
    )
    expired = await settle(
        store, confirm(p2, actor="system:expiry").model_copy(update={"verdict": "expire"})
    )
    assert (rejected.status, expired.status) == ("rejected", "expired")
    late = await settle(store, confirm(p1))
    assert late.status == "rejected" and late.already_settled
    decisions = [
        (a.op, a.actor, a.actor_kind, a.comment)
        for a in await store.audit(wid)
        if a.target == "proposal" and a.op != "propose"
    ]
    assert decisions == [
        ("reject", "bob", "human", "no"),
        ("expire", "system:expiry", "system", None),
    ]
    assert (await store.snapshot(wid)).facts == {}


async def test_wrong_fingerprint_commits_nothing(store):
    wid = unique("w")
    notice = await propose(
        store, wid, [{"op": "add", "path": "/x", "value": 1}], MODEL, proposal_id=unique("p")
    )
    out = await settle(store, confirm(notice).model_copy(update={"fingerprint": "0" * 64}))
    assert out.status == "failed" and out.error and out.error.code == "FINGERPRINT_MISMATCH"
    record = await get_proposal(store, notice.proposal_id)
    assert record is not None and record.status == "pending"


async def test_a_note_appends_audit_rows_once_per_key_and_changes_nothing(store):
    wid = unique("ws")
    await store.create(wid, facts={"a": 1})
    source = ChangeSource(
        actor="ops", actor_kind="human", session_id="s1", idempotency_key=unique("k1")
    )
    entries = [("budget", "set", "/max_session_tokens", 500)]
    first = await store.note(wid, entries, source)
    again = await store.note(wid, entries, source)
    snapshot = await store.snapshot(wid)
    notes = [a for a in await store.audit(wid) if a.target == "budget"]
    assert first == again and first.version == snapshot.version == 1
    assert [(a.path, a.value, a.actor, a.session_id) for a in notes] == [
        ("/max_session_tokens", 500, "ops", "s1")
    ]
