"""One session-id rule: what SessionClient starts, every /v1/sessions/{id}/... addresses."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from durable_loop.core.errors import ErrorCode
from durable_loop.core.session_ids import InvalidSessionId
from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE


async def test_a_session_id_the_client_starts_is_addressable_on_every_route(
    loop_worker, scripted_llm, service
):
    model, sid = unique("m"), unique("team+alice@example.com:ü~1")
    scripted_llm.script(model, [reply.text("plus is fine")])
    settings = settings_for(scripted_llm, model)
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings)
        base = f"/v1/sessions/{quote(sid, safe='')}"
        sent = await http.post(f"{base}/messages", json={"text": "hi"}, headers=ALICE)
        reads = {
            route: await http.get(f"{base}{route}", headers=ALICE)
            for route in ("", "/proposals", "/tool-calls", "/workspace", "/trace")
        }
        other = unique("b+c")
        started = await http.post(
            "/v1/sessions",
            json={"session_id": other, "settings": settings.model_dump(mode="json")},
            headers=ALICE,
        )
        closed = await http.post(f"/v1/sessions/{quote(other)}/close", json={}, headers=ALICE)
    assert sent.status_code == 200, sent.text
    assert sent.json()["reply"] == "plus is fine"
    assert {route: r.status_code for route, r in reads.items()} == dict.fromkeys(reads, 200)
    assert reads[""].json()["messages_done"] == 1
    assert (started.status_code, started.json()["session_id"]) == (201, other)
    assert closed.status_code == 202, closed.text


@pytest.mark.parametrize("bad", ["a b", "tab\there", "a\u202eb", "x" * 201, "..", "a/b"])
async def test_an_id_outside_the_rule_is_refused_by_the_client_and_the_service(
    loop_worker, scripted_llm, service, bad
):
    settings = settings_for(scripted_llm, unique("m"))
    async with loop_worker() as w, service(w) as http:
        with pytest.raises(InvalidSessionId) as refused:
            await w.sessions.start(bad, settings)
        started = await http.post(
            "/v1/sessions",
            json={"session_id": bad, "settings": settings.model_dump(mode="json")},
            headers=ALICE,
        )
        addressed = await http.get(f"/v1/sessions/{quote(bad, safe='')}", headers=ALICE)
    assert refused.value.code is ErrorCode.INVALID_SESSION_ID
    assert (started.status_code, started.json()["error"]["code"]) == (422, "INVALID_REQUEST")
    assert "session_id" in started.json()["error"]["message"]
    assert addressed.status_code in (404, 422)  # '/' and '..' never reach the route
    assert w.sessions.started_workflow_ids == set()
