"""``output_schema`` on ``POST /v1/sessions/{id}/messages``: the reply's ``output`` holds
the typed answer; a schema that is not a JSON Schema is refused with 422 before the
message is admitted."""

from __future__ import annotations

from durable_loop.testing import reply
from tests.conftest import settings_for, unique
from tests.service.conftest import ALICE
from tests.service.test_api import code_of

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def test_typed_answer_over_http_and_a_refused_schema(loop_worker, scripted_llm, service):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text('{"n": "one"}'), reply.text('{"n": 1}')])
    async with loop_worker() as w, service(w) as http:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        messages = f"/v1/sessions/{sid}/messages"
        typed = await http.post(
            messages, json={"text": "count", "output_schema": SCHEMA}, headers=ALICE
        )
        refused = await http.post(
            messages, json={"text": "again", "output_schema": {"type": 5}}, headers=ALICE
        )
        status = await w.sessions.status(sid)
    assert typed.status_code == 200, typed.text
    assert typed.json()["output"] == {"n": 1} and typed.json()["turns"] == 2
    assert (refused.status_code, code_of(refused)) == (422, "INVALID_SETTING")
    assert "not a valid JSON Schema" in refused.json()["error"]["message"]
    assert status.messages_done == 1 and status.queued_messages == 0
    assert len(scripted_llm.requests(model)) == 2
