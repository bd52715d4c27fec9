"""Fork, export and import over HTTP."""

from __future__ import annotations

from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE
from tests.service.test_api import code_of


async def test_fork_export_and_import_over_http(loop_worker, scripted_llm, service):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two"), reply.text("forked")])
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "first")
        await w.sessions.send(sid, "second")
        fork_id, copy_id = unique("fork"), unique("copy")
        fork_url = f"/v1/sessions/{sid}/fork"
        forked = await http.post(
            fork_url, json={"new_session_id": fork_id, "at_turn": 1}, headers=ALICE
        )
        taken = await http.post(fork_url, json={"new_session_id": sid, "at_turn": 1}, headers=ALICE)
        beyond = await http.post(
            fork_url, json={"new_session_id": unique("f"), "at_turn": 5}, headers=ALICE
        )
        unknown = await http.post(
            f"/v1/sessions/{unique('nobody')}/fork",
            json={"new_session_id": unique("f"), "at_turn": 1},
            headers=ALICE,
        )
        anonymous = await http.post(fork_url, json={"new_session_id": unique("f"), "at_turn": 1})
        exported = await http.get(f"/v1/sessions/{sid}/export", headers=ALICE)
        bundle = exported.json()
        imported = await http.post(
            "/v1/sessions/import", json={"new_session_id": copy_id, "bundle": bundle}, headers=ALICE
        )
        newer = await http.post(
            "/v1/sessions/import",
            json={"new_session_id": unique("c"), "bundle": {**bundle, "format_version": 99}},
            headers=ALICE,
        )
        answer = await w.sessions.send(fork_id, "again")
        copied = await w.sessions.status(copy_id)

    assert forked.status_code == 201, forked.text
    assert forked.json()["from_session"] == f"{sid}@1"
    assert forked.json()["messages_copied"] == 2
    assert (taken.status_code, code_of(taken)) == (409, "SESSION_EXISTS")
    assert (beyond.status_code, code_of(beyond)) == (422, "TURN_OUT_OF_RANGE")
    assert (unknown.status_code, code_of(unknown)) == (404, "SESSION_NOT_FOUND")
    assert anonymous.status_code == 401
    assert exported.status_code == 200 and bundle["turns"] == 2
    assert imported.status_code == 201, imported.text
    assert (newer.status_code, code_of(newer)) == (422, "BUNDLE_VERSION_UNSUPPORTED")
    assert answer.reply == "forked"
    assert (copied.messages_done, copied.turns_total) == (2, 2)
