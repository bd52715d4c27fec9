"""A full session against a scripted Gemini generateContent endpoint (real HTTP, real worker)."""

from __future__ import annotations

from durable_loop.core.config import SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.testing import reply_gemini as gemini
from tests.conftest import FAST_RETRY, settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools

KEY_ENV = "DURABLE_LOOP_TEST_GEMINI_KEY"


def gemini_settings(scripted_llm, model: str, **kw) -> SessionSettings:
    settings = settings_for(scripted_llm, model, **kw)
    endpoint = LlmEndpoint(
        provider="gemini",
        model=model,
        base_url=scripted_llm.base_url,
        api_key_env=KEY_ENV,
        timeout_s=10.0,
        retry=FAST_RETRY,
    )
    return settings.model_copy(update={"llm": endpoint})


async def test_function_calls_without_ids_round_trip_by_name_and_order(loop_worker, scripted_llm):
    model, sid, log = unique("gemini"), unique("s"), ToolLog()
    scripted_llm.script(
        model,
        [
            gemini.function_calls(
                ("add", {"a": 2, "b": 3}), ("blob", {"size": 3}), signature="SIG-1"
            ),
            gemini.text("5 and xxx"),
        ],
    )
    settings = gemini_settings(scripted_llm, model, system_prompt="Be brief.")
    async with loop_worker(recording_tools(log), environ={KEY_ENV: "AIza-test"}) as w:
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "2+3 and a blob of 3?")
        stored = await w.store.read(sid)

    assert result.status == "completed", result
    assert result.reply == "5 and xxx"
    assert sorted(log.names()) == ["add", "blob"]
    assert [t.call_id for t in result.tool_calls] == ["dlc_1_0", "dlc_1_1"]
    assert result.usage.input_tokens == 20 and result.usage.output_tokens == 10
    first, second = scripted_llm.requests(model)
    assert first.path == f"/v1beta/models/{model}:generateContent"
    assert first.headers["x-goog-api-key"] == "AIza-test"
    assert first.body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    declared = first.body["tools"][0]["functionDeclarations"]
    assert "add" in {d["name"] for d in declared}
    contents = second.body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p for p in contents[1]["parts"] if "functionCall" in p]
    assert [p["functionCall"]["name"] for p in calls] == ["add", "blob"]
    assert calls[0]["thoughtSignature"] == "SIG-1" and "thoughtSignature" not in calls[1]
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert [(r["name"], r["response"]["data"]) for r in responses] == [("add", 5), ("blob", "xxx")]
    assert all("id" not in r for r in responses)
    assert stored[1].message.tool_calls[0].signature == "SIG-1"


async def test_resource_exhausted_waits_for_the_retry_delay(loop_worker, scripted_llm):
    model, sid = unique("gemini"), unique("s")
    scripted_llm.script(model, [gemini.resource_exhausted(retry_delay_s=1.5), gemini.text("ok")])
    async with loop_worker(environ={KEY_ENV: "k"}) as w:
        await w.sessions.start(sid, gemini_settings(scripted_llm, model))
        result = await w.sessions.send(sid, "hi")
    assert result.status == "completed" and result.reply == "ok"
    first, second = scripted_llm.requests(model)
    assert second.received_at - first.received_at >= 1.4


async def test_blocked_prompt_fails_the_message_and_the_session_goes_on(loop_worker, scripted_llm):
    model, sid = unique("gemini"), unique("s")
    scripted_llm.script(model, [gemini.blocked("SAFETY"), gemini.text("hello")])
    async with loop_worker(environ={KEY_ENV: "k"}) as w:
        await w.sessions.start(sid, gemini_settings(scripted_llm, model))
        blocked = await w.sessions.send(sid, "something")
        ok = await w.sessions.send(sid, "hi")
    assert blocked.error is not None and blocked.error.code == "PROVIDER_BLOCKED"
    assert "SAFETY" in blocked.error.message
    assert ok.status == "completed" and ok.reply == "hello"
    assert len(scripted_llm.requests(model)) == 2
