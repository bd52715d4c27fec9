"""Sessions with payload encryption on: no user text, tool argument or output, reply,
session title, provider error text or API key appears in any recorded history; keys rotate
without breaking running sessions."""

from __future__ import annotations

import base64
import json

from temporalio.client import WorkflowHistory

from durable_loop.client.codec import KeyRing, data_converter, new_key
from durable_loop.client.trace.fetch import load_trace
from durable_loop.client.trace.models import Trace
from durable_loop.core.registry import ToolRegistry
from durable_loop.testing import reply
from durable_loop.testing.history import history_bytes
from durable_loop.worker.builder import WorkerTuning
from tests.conftest import settings_for, unique

KEY_ENV = "DL_CODEC_TEST_API_KEY"
API_KEY = "sk-codec-test-9f8e7d6c5b4a3210"
MARKERS = [
    "USER-MARKER-1c2d",
    "ARGS-MARKER-3e4f",
    "TOOL-OUTPUT-MARKER-5a6b",
    "REPLY-MARKER-7c8d",
    "TITLE-MARKER-9e0f",
    "PROVIDER-ERROR-MARKER-a1b2",
    API_KEY,
]
K1, K2 = new_key("k1"), new_key("k2")


def lookup_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool()
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return f"TOOL-OUTPUT-MARKER-5a6b about {topic}"

    return registry


PATCH_MARKER_KEYS = {"id", "deprecated"}
LOCAL_ACTIVITY_MARKER_KEYS = {
    "seq",
    "attempt",
    "activity_id",
    "activity_type",
    "complete_time",
    "backoff",
    "original_schedule_time",
    "activation_index",
}


def payload_encodings(history: WorkflowHistory) -> set[str]:
    """The ``encoding`` of every payload in the history, except the SDK's own bookkeeping
    in local activity markers (``details.data``: seq, attempt, activity type, time) and
    for patches (the marker's ``details.patch-data`` and the ``TemporalChangeVersion``
    search attribute: patch ids), each checked to hold nothing else."""
    found: set[str] = set()

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            metadata = node.get("metadata")
            if isinstance(metadata, dict) and "encoding" in metadata and "data" in node:
                encoding = base64.b64decode(metadata["encoding"]).decode()
                if encoding == "json/plain" and path.endswith("details/data/payloads"):
                    body = json.loads(base64.b64decode(node["data"]))
                    assert set(body) <= LOCAL_ACTIVITY_MARKER_KEYS, body
                    return
                if encoding == "json/plain" and path.endswith("details/patch-data/payloads"):
                    body = json.loads(base64.b64decode(node["data"]))
                    assert set(body) <= PATCH_MARKER_KEYS, body
                    return
                if encoding == "json/plain" and path.endswith("/TemporalChangeVersion"):
                    body = json.loads(base64.b64decode(node["data"]))
                    assert all(isinstance(p, str) and len(p) < 64 for p in body), body
                    return
                found.add(encoding)
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, path)

    walk(history.to_json_dict(), "")
    return found


async def run_sessions(w, llm, traces: list[Trace] | None = None) -> list[WorkflowHistory]:
    """One session that calls a tool and replies, one whose provider fails with a 400."""
    ok_model, bad_model = unique("m"), unique("m")
    llm.script(
        ok_model,
        [reply.tool_call("lookup", {"topic": "ARGS-MARKER-3e4f"}), reply.text("REPLY-MARKER-7c8d")],
    )
    llm.script(bad_model, [reply.error(400, f"PROVIDER-ERROR-MARKER-a1b2 key {API_KEY}")])
    histories: list[WorkflowHistory] = []
    for model, expect in ((ok_model, "completed"), (bad_model, "failed")):
        sid = unique("s")
        settings = settings_for(llm, model, api_key_env=KEY_ENV).model_copy(
            update={"title": "TITLE-MARKER-9e0f"}
        )
        await w.sessions.start(sid, settings)
        result = await w.sessions.send(sid, "USER-MARKER-1c2d: what is it?")
        assert result.status == expect, result
        if expect == "completed":
            assert result.reply == "REPLY-MARKER-7c8d"
            assert [t.name for t in result.tool_calls] == ["lookup"]
        else:
            assert result.error is not None and result.error.code == "PROVIDER_BAD_REQUEST"
            assert "PROVIDER-ERROR-MARKER-a1b2" in result.error.message
            assert API_KEY not in result.error.message
        histories.extend(await w.histories(sid))
        if traces is not None:
            traces.append(await load_trace(w.sessions.client, sid, db_url=None))
    return histories


async def test_encrypted_histories_hold_no_plaintext_and_no_api_key(loop_worker, scripted_llm):
    converter = data_converter(KeyRing.parse(K1))
    environ = {KEY_ENV: API_KEY}
    async with loop_worker(lookup_tools(), environ=environ, data_converter=converter) as w:
        histories = await run_sessions(w, scripted_llm)
    assert histories
    for history in histories:
        raw = history_bytes(history)
        text = json.dumps(history.to_json_dict())
        for marker in MARKERS:
            assert marker.encode() not in raw, marker
            assert marker not in text, marker
        assert payload_encodings(history) == {"binary/encrypted"}


async def test_trace_decodes_encrypted_sessions_with_the_keys(loop_worker, scripted_llm):
    """``durable-loop trace`` (load_trace) reads through the client's codec: the same rows
    as a plain session for whoever holds the keys, the provider error text included."""
    converter = data_converter(KeyRing.parse(K1))
    traces: list[Trace] = []
    async with loop_worker(
        lookup_tools(), environ={KEY_ENV: API_KEY}, data_converter=converter
    ) as w:
        await run_sessions(w, scripted_llm, traces)
    ok, failed = traces
    [call] = [c for t in ok.turns for c in t.calls]
    assert (call.name, call.ok) == ("lookup", True)
    assert [r.reply for r in ok.message_results] == ["REPLY-MARKER-7c8d"]
    [error] = [t.error for t in failed.turns if t.error is not None]
    assert error.code == "PROVIDER_BAD_REQUEST"
    assert "PROVIDER-ERROR-MARKER-a1b2" in error.message and API_KEY not in error.message


async def test_the_same_sessions_unencrypted_show_the_markers(loop_worker, scripted_llm):
    """The control: the scan above would see plaintext if there were any (the API key is
    never in history, encrypted or not)."""
    async with loop_worker(lookup_tools(), environ={KEY_ENV: API_KEY}) as w:
        histories = await run_sessions(w, scripted_llm)
    raw = b"".join(history_bytes(h) for h in histories)
    for marker in MARKERS[:-1]:
        assert marker.encode() in raw, marker
    assert API_KEY.encode() not in raw
    assert "json/plain" in set().union(*(payload_encodings(h) for h in histories))


async def test_key_rotation_keeps_a_running_session_going(loop_worker, scripted_llm):
    model, sid, queue = unique("m"), unique("s"), unique("q")
    scripted_llm.script(model, [reply.text("first"), reply.text("second")])
    settings = settings_for(scripted_llm, model)
    old = data_converter(KeyRing.parse(K1))
    no_cache = WorkerTuning(max_cached_workflows=0)  # the next worker takes over at once
    async with loop_worker(task_queue=queue, data_converter=old, tuning=no_cache) as w:
        await w.sessions.start(sid, settings)
        assert (await w.sessions.send(sid, "one")).reply == "first"
    rotated = data_converter(KeyRing.parse(f"{K2},{K1}"))
    async with loop_worker(task_queue=queue, data_converter=rotated) as w:
        await w.sessions.start(sid, settings)  # joins the running session
        assert (await w.sessions.send(sid, "two")).reply == "second"
        [history] = await w.histories(sid)
    key_ids = {
        base64.b64decode(m["metadata"]["encryption-key-id"]).decode()
        for m in _payloads(history.to_json_dict())
    }
    assert key_ids == {"k1", "k2"}


def _payloads(node: object) -> list[dict]:
    if isinstance(node, dict):
        here = [node] if "encryption-key-id" in (node.get("metadata") or {}) else []
        return here + [p for v in node.values() for p in _payloads(v)]
    if isinstance(node, list):
        return [p for v in node for p in _payloads(v)]
    return []
