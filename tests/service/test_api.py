"""The JSON endpoints: auth, idempotent messages, proposals and decisions, bad input."""

from __future__ import annotations

import json

import pytest_asyncio

from durable_loop.core.config import RuntimeConfig
from durable_loop.service.auth import COOKIE
from durable_loop.store.stream import StreamStore
from durable_loop.store.workspace import ChangeSource
from durable_loop.testing import reply, reply_stream
from durable_loop.testing.pytest_plugin import running_test_environment
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import FACTS, session_with_proposal
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE, BOB
from tests.workflows.proposal_kit import day
from tests.workflows.test_smoke import calculator
from tests.workflows.toolkit import ToolLog, recording_tools


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    """A server of this module's own: skipping simulated days must not wait on another
    module's leftover workflow task (no worker polls it, so it locks time skipping)."""
    async with running_test_environment() as env:
        yield env


def code_of(response) -> str:
    return response.json()["error"]["code"]


async def test_openapi_schema_lists_the_operations_and_bearer_auth(loop_worker, service):
    async with loop_worker() as w, service(w) as http:
        schema = (await http.get("/openapi.json")).json()
    paths = set(schema["paths"])
    assert {
        "/v1/sessions",
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/messages",
        "/v1/sessions/{session_id}/proposals",
        "/v1/proposals",
        "/v1/sessions/{session_id}/proposals/{proposal_id}/decision",
        "/v1/sessions/{session_id}/trace",
        "/v1/sessions/{session_id}/workspace",
        "/v1/sessions/{session_id}/budget",
    } <= paths
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    message = schema["paths"]["/v1/sessions/{session_id}/messages"]["post"]
    assert "Idempotency-Key" in {p["name"] for p in message["parameters"]}


async def test_requests_without_a_valid_token_never_reach_the_workflow(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("never sent")])
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        missing = await http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
        wrong = await http.post(
            f"/v1/sessions/{sid}/messages",
            json={"text": "hi"},
            headers={"Authorization": "Bearer not-a-token-at-all"},
        )
        malformed_unauth = await http.post(f"/v1/sessions/{sid}/messages", content=b"{")
        status = await w.sessions.status(sid)
    assert (missing.status_code, code_of(missing)) == (401, "UNAUTHENTICATED")
    assert missing.headers["www-authenticate"] == "Bearer"
    assert (wrong.status_code, code_of(wrong)) == (401, "INVALID_TOKEN")
    assert malformed_unauth.status_code == 401
    assert status.messages_done == 0 and status.queued_messages == 0
    assert scripted_llm.requests(model) == []


async def test_a_retried_post_with_the_same_idempotency_key_makes_one_turn(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("first reply"), reply.text("second reply")])
    settings = settings_for(scripted_llm, model).model_dump(mode="json")
    async with loop_worker() as w, service(w) as http:
        started = await http.post(
            "/v1/sessions", json={"session_id": sid, "settings": settings}, headers=ALICE
        )
        url = f"/v1/sessions/{sid}/messages"
        keyed = {**ALICE, "Idempotency-Key": "order-42"}
        first = await http.post(url, json={"text": "hello"}, headers=keyed)
        retry = await http.post(url, json={"text": "hello"}, headers=keyed)
        other = await http.post(url, json={"text": "hello"}, headers={**keyed, **BOB})
        status = (await http.get(f"/v1/sessions/{sid}", headers=ALICE)).json()
        trace = (await http.get(f"/v1/sessions/{sid}/trace", headers=ALICE)).json()
    assert started.status_code == 201, started.text
    assert started.json()["workflow_id"] == f"session-{sid}"
    assert first.status_code == retry.status_code == 200, first.text
    assert first.json() == retry.json()
    assert first.json()["reply"] == "first reply"
    assert first.json()["message_id"] == "alice:order-42"
    assert other.json()["reply"] == "second reply"  # the key is scoped to the identity
    assert status["messages_done"] == 2
    assert len(scripted_llm.requests(model)) == 2
    assert [t["model"] for t in trace["turns"]] == [model, model]


async def test_update_with_start_through_the_message_endpoint(loop_worker, scripted_llm, service):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("started and answered")])
    settings = settings_for(scripted_llm, model).model_dump(mode="json")
    async with loop_worker() as w, service(w) as http:
        answer = await http.post(
            f"/v1/sessions/{sid}/messages",
            json={"text": "hi", "settings": settings},
            headers=ALICE,
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["reply"] == "started and answered"


async def test_bad_input_is_refused_with_a_code_and_changes_nothing(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("unused")])
    async with loop_worker() as w, service(w, max_message_chars=100, max_body_bytes=4_000) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        url = f"/v1/sessions/{sid}/messages"
        malformed = await http.post(
            url, content=b'{"text": ', headers={**ALICE, "Content-Type": "application/json"}
        )
        not_json = await http.post(url, content=b"text=hi", headers=ALICE)
        wrong_shape = await http.post(url, json={"txt": "hi"}, headers=ALICE)
        empty = await http.post(url, json={"text": ""}, headers=ALICE)
        too_long = await http.post(url, json={"text": "x" * 101}, headers=ALICE)
        too_big = await http.post(url, json={"text": "x" * 5_000}, headers=ALICE)
        unknown = await http.post(
            f"/v1/sessions/{unique('nope')}/messages", json={"text": "hi"}, headers=ALICE
        )
        unknown_status = await http.get(f"/v1/sessions/{unique('nope')}", headers=ALICE)
        bad_id = await http.get("/v1/sessions/..%2Fetc", headers=ALICE)
        status = await w.sessions.status(sid)
    assert (malformed.status_code, code_of(malformed)) == (400, "INVALID_JSON")
    assert (not_json.status_code, code_of(not_json)) == (400, "INVALID_JSON")
    assert (wrong_shape.status_code, code_of(wrong_shape)) == (422, "INVALID_REQUEST")
    assert "text" in wrong_shape.json()["error"]["message"]
    assert (empty.status_code, code_of(empty)) == (422, "INVALID_REQUEST")
    assert (too_long.status_code, code_of(too_long)) == (413, "MESSAGE_TOO_LARGE")
    assert (too_big.status_code, code_of(too_big)) == (413, "BODY_TOO_LARGE")
    assert (unknown.status_code, code_of(unknown)) == (404, "SESSION_NOT_FOUND")
    assert (unknown_status.status_code, code_of(unknown_status)) == (404, "SESSION_NOT_FOUND")
    assert bad_id.status_code in (404, 422)
    assert status.messages_done == 0 and status.queued_messages == 0
    assert scripted_llm.requests(model) == []


async def test_decisions_record_the_token_identity(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w, service(w) as http:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        listing = (await http.get("/v1/proposals", headers=ALICE)).json()
        url = f"/v1/sessions/{sid}/proposals/{pending.proposal_id}/decision"
        unauth = await http.post(url, json={"verdict": "confirm"})
        still_pending = await w.sessions.pending_proposals(sid)
        stale = await http.post(
            url, json={"verdict": "confirm", "fingerprint": "0" * 64}, headers=BOB
        )
        confirmed = await http.post(
            url,
            json={"verdict": "confirm", "fingerprint": pending.fingerprint, "comment": "ok"},
            headers=BOB,
        )
        bound = {"verdict": "reject", "fingerprint": pending.fingerprint}
        again = await http.post(url, json=bound, headers=ALICE)
        unknown = await http.post(
            f"/v1/sessions/{sid}/proposals/p-unknown/decision", json=bound, headers=ALICE
        )
    mine = [i for i in listing["items"] if i["session_id"] == sid]
    if temporal_env.supports_time_skipping:  # the time-skipping server has no visibility
        assert listing["source"] == "registry"
    assert len(mine) == 1
    diff = mine[0]["diff"]
    assert {"kind": "added", "text": '  "title": "New title"'} in diff["lines"]
    assert {"kind": "removed", "text": '  "title": "Old title"'} in diff["lines"]
    assert diff["before"] == FACTS
    assert unauth.status_code == 401 and len(still_pending) == 1
    assert (stale.status_code, code_of(stale)) == (409, "FINGERPRINT_MISMATCH")
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["decided_by"] == "bob"
    assert confirmed.json()["status"] == "committed"
    assert (again.status_code, code_of(again)) == (409, "ALREADY_DECIDED")
    assert (unknown.status_code, code_of(unknown)) == (404, "UNKNOWN_PROPOSAL")
    audit = [a for a in await ws.audit(sid) if a.target == "facts"]
    assert {a.actor for a in audit} == {"bob"}


async def test_a_decision_on_an_expired_proposal_is_gone(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w, service(w) as http:
        _, sid, pending = await session_with_proposal(
            w, ws, scripted_llm, temporal_env, ttl_days=1.0
        )
        await temporal_env.sleep(2 * day(temporal_env))
        url = f"/v1/sessions/{sid}/proposals/{pending.proposal_id}/decision"
        late = await http.post(
            url, json={"verdict": "confirm", "fingerprint": pending.fingerprint}, headers=ALICE
        )
    assert (late.status_code, code_of(late)) == (410, "EXPIRED")
    assert (await ws.snapshot(sid)).facts == FACTS


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        events.append((fields["event"], json.loads(fields["data"])))
    return events


async def test_streamed_message_shows_tool_calls_then_the_result(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 2, "b": 3}, call_id="c-1"), reply.text("5")]
    )
    async with loop_worker(calculator()) as w, service(w, max_message_chars=50) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        url = f"/v1/sessions/{sid}/messages/stream"
        streamed = await http.post(url, json={"text": "2+3?"}, headers=ALICE)
        unknown = await http.post(
            f"/v1/sessions/{unique('nope')}/messages/stream", json={"text": "hi"}, headers=ALICE
        )
        too_long = await http.post(url, json={"text": "x" * 51}, headers=ALICE)
    assert streamed.status_code == 200, streamed.text
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = sse_events(streamed.text)
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1
    assert events[-1][1]["result"]["reply"] == "5"
    entries = [data["entry"] for kind, data in events if kind == "entry"]
    assert [(e["role"], e["tool_names"]) for e in entries] == [
        ("user", []),
        ("assistant", ["add"]),
        ("tool", ["add"]),
        ("assistant", []),
    ]
    assert (unknown.status_code, code_of(unknown)) == (404, "SESSION_NOT_FOUND")
    assert (too_long.status_code, code_of(too_long)) == (413, "MESSAGE_TOO_LARGE")


async def test_streamed_message_forwards_reply_text(loop_worker, scripted_llm, service):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply_stream.text("It ", "is ", "fi", "ve.")])
    runtime = RuntimeConfig(stream_replies=True)
    async with loop_worker() as w, service(w, chunks=StreamStore(w.store.db)) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        streamed = await http.post(
            f"/v1/sessions/{sid}/messages/stream", json={"text": "2+3?"}, headers=ALICE
        )
    events = sse_events(streamed.text)
    texts = [data["text"]["text"] for kind, data in events if kind == "text"]
    assert "".join(texts) == "It is five."
    assert events[-1][0] == "result"
    assert events[-1][1]["result"]["reply"] == "It is five."


async def test_an_idempotency_key_reused_for_another_body_is_a_coded_conflict(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("first reply"), reply.text("never sent")])
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        url = f"/v1/sessions/{sid}/messages"
        keyed = {**ALICE, "Idempotency-Key": "order-43"}
        first = await http.post(url, json={"text": "pay 10"}, headers=keyed)
        reused = await http.post(url, json={"text": "pay 99"}, headers=keyed)
        replay = await http.post(url, json={"text": "pay 10"}, headers=keyed)
        status = await w.sessions.status(sid)
    assert first.status_code == replay.status_code == 200, first.text
    assert first.json() == replay.json()
    assert (reused.status_code, code_of(reused)) == (409, "IDEMPOTENCY_KEY_REUSED")
    assert "another text" in reused.json()["error"]["message"]
    assert status.messages_done == 1
    assert len(scripted_llm.requests(model)) == 1


async def test_a_422_names_every_invalid_field(loop_worker, service):
    async with loop_worker() as w, service(w) as http:
        answer = await http.post(
            f"/v1/sessions/{unique('s')}/messages",
            json={"txt": "hi", "settings": {"llm": {"timeout_s": -1}}},
            headers=ALICE,
        )
    assert (answer.status_code, code_of(answer)) == (422, "INVALID_REQUEST")
    message = answer.json()["error"]["message"]
    for field in ("text: Field required", "txt: Extra inputs", "settings.llm.model", "timeout_s"):
        assert field in message, message
    assert "more)" not in message


async def test_the_trace_carries_call_arguments_whole_on_request(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    label = "needle " + "y" * 300
    scripted_llm.script(
        model, [reply.tool_call("nap", {"label": label, "seconds": 0}), reply.text("ok")]
    )
    async with loop_worker(recording_tools(ToolLog())) as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "nap")
        url = f"/v1/sessions/{sid}/trace"
        bounded = (await http.get(url, headers=ALICE)).json()
        whole = (await http.get(url, params={"full_args": "true"}, headers=ALICE)).json()
    cut = bounded["turns"][0]["calls"][0]["arguments"]
    assert cut["truncated"] and len(cut["text"]) == 200 and "needle" in cut["text"]
    full = whole["turns"][0]["calls"][0]["arguments"]
    assert not full["truncated"] and json.loads(full["text"])["label"] == label


async def test_the_workspace_endpoint_shows_committed_facts_and_audit(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w, service(w) as http:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        decision = await http.post(
            f"/v1/sessions/{sid}/proposals/{pending.proposal_id}/decision",
            json={"verdict": "confirm", "comment": "fine", "fingerprint": pending.fingerprint},
            headers=ALICE,
        )
        url = f"/v1/sessions/{sid}/workspace"
        view = await http.get(url, headers=ALICE)
        newest = await http.get(url, params={"audit": 1}, headers=ALICE)
        unknown = await http.get(f"/v1/sessions/{unique('nope')}/workspace", headers=ALICE)
        unauthenticated = await http.get(url)
    assert decision.status_code == 200, decision.text
    assert view.status_code == 200, view.text
    body = view.json()
    assert body["workspace_id"] == sid and body["exists"] is True
    assert body["facts"] == {"title": "New title", "tags": ["draft", "reviewed"]}
    assert body["facts_version"] == 1 and body["version"] >= 2 and body["locks"] == []
    committed = [a for a in body["audit"] if a["target"] == "facts"]
    assert {(a["actor"], a["proposal_id"], a["comment"]) for a in committed} == {
        ("alice", pending.proposal_id, "fine")
    }
    assert [(a["target"], a["op"]) for a in newest.json()["audit"]] == [("proposal", "confirm")]
    assert (unknown.status_code, code_of(unknown)) == (404, "SESSION_NOT_FOUND")
    assert unauthenticated.status_code == 401


async def test_the_budget_endpoint_raises_it_as_the_token_identity(
    loop_worker, scripted_llm, service, ws
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two")])
    runtime = RuntimeConfig(max_session_tokens=10)
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        spent = await w.sessions.send(sid, "a")
        over = await w.sessions.send(sid, "b")
        url = f"/v1/sessions/{sid}/budget"
        empty = await http.post(url, json={}, headers=ALICE)
        raised = await http.post(
            url, json={"max_session_tokens": 100, "comment": "launch"}, headers=BOB
        )
        after = await w.sessions.send(sid, "c")
        missing = await http.post(
            f"/v1/sessions/{unique('nope')}/budget", json={"max_turns": 2}, headers=ALICE
        )
    assert spent.reply == "one" and over.error.code == "BUDGET_EXCEEDED"
    assert "POST /v1/sessions/SESSION/budget" in over.error.message
    assert (empty.status_code, code_of(empty)) == (422, "INVALID_SETTING")
    assert raised.status_code == 200, raised.text
    body = raised.json()
    assert body["changed_by"] == "bob" and body["budget"]["max_session_tokens"] == 100
    assert after.reply == "two"
    assert (missing.status_code, code_of(missing)) == (404, "SESSION_NOT_FOUND")
    (row,) = [a for a in await ws.audit(sid) if a.target == "budget"]
    assert (row.actor, row.path, row.value, row.comment) == (
        "bob",
        "/max_session_tokens",
        100,
        "launch",
    )


async def test_starting_a_running_session_with_other_settings_says_so(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("s")
    settings = settings_for(scripted_llm, model).model_dump(mode="json")
    other = settings_for(scripted_llm, unique("other")).model_dump(mode="json")
    async with loop_worker() as w, service(w) as http:
        first = await http.post(
            "/v1/sessions", json={"session_id": sid, "settings": settings}, headers=ALICE
        )
        again = await http.post(
            "/v1/sessions", json={"session_id": sid, "settings": other}, headers=ALICE
        )
        status = await w.sessions.status(sid)
    assert first.status_code == again.status_code == 201
    assert (first.json()["started"], first.json()["settings_not_applied"]) == (True, [])
    assert (again.json()["started"], again.json()["settings_not_applied"]) == (False, ["llm"])
    assert status.model == model


async def test_a_decision_without_a_fingerprint_needs_a_trusted_service(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        url = f"/v1/sessions/{sid}/proposals/{pending.proposal_id}/decision"
        async with service(w) as http:
            unbound = await http.post(url, json={"verdict": "confirm"}, headers=ALICE)
            still = await w.sessions.pending_proposals(sid)
        async with service(w, allow_unbound_decisions=True) as trusted:
            confirmed = await trusted.post(url, json={"verdict": "confirm"}, headers=ALICE)
    assert (unbound.status_code, code_of(unbound)) == (428, "FINGERPRINT_REQUIRED")
    assert [p.proposal_id for p in still] == [pending.proposal_id]
    assert confirmed.status_code == 200 and confirmed.json()["status"] == "committed"
    [refused] = [a for a in await ws.audit(sid) if a.op == "refused"]  # audited, as all are
    assert (refused.actor, refused.proposal_id, refused.value["code"]) == (
        "alice",
        pending.proposal_id,
        "FINGERPRINT_REQUIRED",
    )


async def test_a_proposal_that_can_only_conflict_is_shown_as_conflicting(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w, service(w) as http:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        edit = [{"op": "replace", "path": "/title", "value": "Edited by hand"}]
        await ws.apply(sid, "facts", edit, ChangeSource(actor="dana", actor_kind="human"))
        listing = (await http.get("/v1/proposals", headers=ALICE)).json()
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get("/ui/approvals")
    [item] = [i for i in listing["items"] if i["session_id"] == sid]
    assert item["conflict"] == {"paths": ["/title"], "current": {"/title": "Edited by hand"}}
    card = page.text.split(f'data-proposal-id="{pending.proposal_id}"')[1].split("</article>")[0]
    assert 'data-testid="conflict"' in card and '"Edited by hand"</code>' in card
    assert 'value="approve"' not in card and 'value="reject"' in card
