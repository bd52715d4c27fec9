"""API keys stay in the worker's environment: never in history, the store or error text."""

from __future__ import annotations

import uuid

from durable_loop.testing import reply
from durable_loop.testing.history import history_bytes
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

KEY_ENV = "DURABLE_LOOP_TEST_FAKE_KEY"


async def test_api_key_is_sent_but_never_recorded(loop_worker, scripted_llm):
    key = f"sk-test-{uuid.uuid4().hex}"
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_call("add", {"a": 1, "b": 2}),
            reply.text("3"),
            reply.error(401, f"Incorrect API key provided: {key}. Find your key at ..."),
        ],
    )
    settings = settings_for(scripted_llm, model, api_key_env=KEY_ENV)
    async with loop_worker(recording_tools(ToolLog()), environ={KEY_ENV: key}) as w:
        await w.sessions.start(sid, settings)
        ok = await w.sessions.send(sid, "1+2?")
        rejected = await w.sessions.send(sid, "again")
        histories = await w.histories(sid)
        stored = await w.store.read(sid)

    assert ok.status == "completed"
    requests = scripted_llm.requests(model)
    assert len(requests) == 3
    assert all(r.headers["authorization"] == f"Bearer {key}" for r in requests)
    assert rejected.error is not None and rejected.error.code == "PROVIDER_AUTH"
    assert "Incorrect API key provided: ***" in rejected.error.message
    assert key not in rejected.error.message

    secret = key.encode()
    assert histories and all(secret not in history_bytes(h) for h in histories)
    assert all(key not in h.to_json() for h in histories)
    # The history does record the variable's name and the failure, so the scan is not vacuous.
    assert any(KEY_ENV.encode() in history_bytes(h) for h in histories)
    assert any(b"Incorrect API key provided: ***" in history_bytes(h) for h in histories)
    for row in stored:
        assert key not in row.message.model_dump_json() and key not in str(row.meta)


async def test_missing_key_variable_fails_with_a_clear_config_error(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("unreachable")])
    async with loop_worker(environ={}) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, api_key_env=KEY_ENV))
        result = await w.sessions.send(sid, "hi")
    assert result.error is not None and result.error.code == "CONFIG_ERROR"
    assert KEY_ENV in result.error.message and "worker's environment" in result.error.message
    assert scripted_llm.requests(model) == []


async def test_key_cut_off_by_the_error_snippet_does_not_leak(loop_worker, scripted_llm):
    key = f"sk-test-{uuid.uuid4().hex}"
    model, sid = unique("m"), unique("s")
    # The error text keeps the first 400 characters of the body; put the key across that edge.
    padding = "p" * (400 - len('{"error": {"message": "') - len(key) // 2)
    scripted_llm.script(model, [reply.error(403, padding + key + " is not allowed")])
    settings = settings_for(scripted_llm, model, api_key_env=KEY_ENV)
    async with loop_worker(environ={KEY_ENV: key}) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "hi")
        histories = await w.histories(sid)
    assert result.error is not None and result.error.code == "PROVIDER_AUTH"
    assert key[: len(key) // 2] not in result.error.message
    assert all(key[: len(key) // 2].encode() not in history_bytes(h) for h in histories)
