"""Settings re-sent to a running session by update-with-start are not applied, and the
RunResult (and `durable-loop send`) says which."""

from __future__ import annotations

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.settings_digest import not_applied, settings_digest
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


async def test_different_settings_for_a_running_session_are_named(loop_worker, scripted_llm):
    model, other, sid = unique("m"), unique("other"), unique("s")
    scripted_llm.script(model, [reply.text("one"), reply.text("two"), reply.text("three")])
    settings = settings_for(scripted_llm, model)
    changed = settings_for(scripted_llm, other, runtime=RuntimeConfig(max_turns=3))
    async with loop_worker() as w:
        first = await w.sessions.start_and_send(sid, settings, "a")
        same = await w.sessions.start_and_send(sid, settings, "b")
        different = await w.sessions.start_and_send(sid, changed, "c")
        status = await w.sessions.status(sid)
    assert first.settings_not_applied == same.settings_not_applied == []
    assert different.settings_not_applied == ["llm", "runtime"]
    assert different.reply == "three" and different.model == model
    assert status.model == model and scripted_llm.requests(other) == []


def test_the_digest_leaves_out_what_the_client_manages(scripted_llm):
    settings = settings_for(scripted_llm, "m")
    managed = settings.model_copy(update={"search_attributes": True})
    assert "search_attributes" not in settings_digest(settings)
    assert not_applied(settings_digest(managed), settings) == []
    titled = settings.model_copy(update={"title": "renamed"})
    assert not_applied(settings_digest(titled), settings) == ["title"]
    assert not_applied(None, settings) == []


async def test_start_or_join_says_whether_it_started_and_what_it_did_not_apply(
    loop_worker, scripted_llm
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("one")])
    settings = settings_for(scripted_llm, model)
    async with loop_worker() as w:
        fresh = await w.sessions.start_or_join(sid, settings)
        joined = await w.sessions.start_or_join(sid, settings)
        titled = settings.model_copy(update={"title": "renamed", "system_prompt": "be brief"})
        ignored = await w.sessions.start_or_join(sid, titled)
        reply_text = (await w.sessions.send(sid, "a")).reply
    assert (fresh.started, fresh.settings_not_applied) == (True, [])
    assert (joined.started, joined.settings_not_applied) == (False, [])
    assert ignored.settings_not_applied == ["system_prompt", "title"]
    assert joined.handle.id == fresh.handle.id and reply_text == "one"
    assert scripted_llm.requests(model)[0].body["messages"][0]["role"] == "user"  # no prompt
