"""Export and import: a session as a portable bundle, recreated on another store."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from durable_loop.client.session_data import FORMAT_VERSION, SessionBundle, SessionData
from durable_loop.client.session_data.bundle import REDACTED, read_bundle, without_secrets
from durable_loop.client.session_data.client import MEMO_IMPORTED_FROM
from durable_loop.client.sessions import SessionClient
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.store import StoreConfig
from durable_loop.store.engine import open_store
from durable_loop.testing import reply
from durable_loop.testing.pytest_plugin import running_test_environment
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import FACTS, RENAME, workspace_store
from tests.conftest import unique
from tests.workflows.proposal_kit import first_pending, session_settings

CANARY = "sk-canary-7f3e9b1d2c"
KEY_ENV = "DURABLE_LOOP_TEST_CANARY_KEY"
VARYING = ("session_id", "exported_at")
"""What differs between two exports of the same content: the id, and when."""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def temporal_env():
    async with running_test_environment() as env:
        yield env


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


@pytest_asyncio.fixture
async def other_store(tmp_path):
    """Another store: a SQLite file of its own (the original is PostgreSQL in CI)."""
    store = open_store(StoreConfig.sqlite_file(tmp_path / "other.db"))
    yield store
    await store.close()


def comparable(bundle: SessionBundle) -> dict[str, object]:
    return bundle.model_dump(mode="json", exclude=set(VARYING))


async def decided_session(w, ws, scripted_llm, env, *, keyed: bool = False) -> str:
    """A session with a proposal approved by alice and two messages; ``keyed``: with a
    key variable and, where it does not belong, a key written inline in its settings."""
    model, sid = unique("m"), unique("s")
    await ws.create(sid, facts=FACTS)
    scripted_llm.script(
        model,
        [
            reply.tool_call("facts_propose", RENAME),
            reply.text("I proposed a rename."),
            reply.text("noted"),
        ],
    )
    settings = session_settings(scripted_llm, model, env)
    if keyed:
        llm = settings.llm.model_copy(
            update={"api_key_env": KEY_ENV, "llm_options": {"api_key": CANARY}}
        )
        settings = settings.model_copy(update={"llm": llm})
    await w.sessions.start(sid, settings)
    assert (await w.sessions.send(sid, "rename the title")).status == "completed"
    pending = await first_pending(w.sessions.approvals, sid)
    await w.sessions.confirm(sid, pending.proposal_id, "alice", comment="fine")
    assert (await w.sessions.send(sid, "thanks")).reply == "noted"
    return sid


async def test_round_trip_is_lossless_and_carries_no_secret(
    loop_worker, scripted_llm, temporal_env, ws, other_store
):
    async with loop_worker(workspace_tools(ws), environ={KEY_ENV: CANARY}) as w:
        sid = await decided_session(w, ws, scripted_llm, temporal_env, keyed=True)
        exported = await SessionData(w.sessions, w.store.db).export(sid)

    bundle_text = exported.model_dump_json()
    assert CANARY not in bundle_text
    assert exported.settings["llm"]["llm_options"] == {"api_key": REDACTED}  # type: ignore[index]
    assert exported.settings["llm"]["api_key_env"] == KEY_ENV  # type: ignore[index]
    assert exported.format_version == FORMAT_VERSION
    assert [(d.target, d.verdict, d.actor) for d in exported.decisions][-1:] == [
        ("proposal", "approve", "alice")
    ]
    assert exported.turns == 3 and exported.messages == 2
    assert exported.usage.total_tokens > 0

    elsewhere = SessionClient(temporal_env.client, task_queue=unique("no-worker"))
    imported_id = unique("imported")
    other = SessionData(elsewhere, other_store.db)
    handle = await other.import_bundle(read_bundle(bundle_text), imported_id)
    try:
        again = await other.export(imported_id)
        memo = await (await handle.describe()).memo_value(MEMO_IMPORTED_FROM)
    finally:
        await handle.terminate("test done")
    assert memo == sid
    assert comparable(again) == comparable(exported)
    assert CANARY not in again.model_dump_json()


async def test_imported_session_goes_on_where_the_bundle_ended(
    loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        sid = await decided_session(w, ws, scripted_llm, temporal_env)
        data = SessionData(w.sessions, w.store.db)
        bundle = await data.export(sid)
        model = str(bundle.settings["llm"]["model"])  # type: ignore[index]
        scripted_llm.script(model, [reply.text("still here")])
        new_id = unique("imported")
        await data.import_bundle(bundle, new_id)
        answer = await w.sessions.send(new_id, "are you there")
        status = await w.sessions.status(new_id)
        facts = (await ws.snapshot(new_id)).facts
        with pytest.raises(DurableLoopError) as taken:
            await data.import_bundle(bundle, new_id)
    assert answer.reply == "still here"
    assert (status.messages_done, status.turns_total) == (3, 4)
    assert facts["title"] == "New title"
    assert taken.value.code == ErrorCode.SESSION_EXISTS
    sent = [m.get("content") for m in scripted_llm.requests(model)[-1].body["messages"]]
    assert sent[-1] == "are you there" and "thanks" in sent


def test_a_newer_bundle_is_refused_with_a_code():
    newer = json.dumps({"format_version": FORMAT_VERSION + 1, "anything": "else"})
    with pytest.raises(DurableLoopError) as refused:
        read_bundle(newer)
    assert refused.value.code == ErrorCode.BUNDLE_VERSION_UNSUPPORTED
    assert f"format_version {FORMAT_VERSION + 1}" in refused.value.message


def test_secret_looking_names_are_redacted_and_only_those():
    settings = SessionSettings(
        llm=LlmEndpoint(
            model="m",
            api_key_env=KEY_ENV,
            llm_options={"max_tokens": 64, "headers": {"Authorization": CANARY, "X-Trace": "t"}},
        ),
        runtime=RuntimeConfig(request_overrides={"access_token": CANARY, "top_k": 5}),
    )
    kept = without_secrets(settings)
    text = json.dumps(kept)
    assert CANARY not in text
    assert kept["llm"]["llm_options"] == {  # type: ignore[index]
        "max_tokens": 64,
        "headers": {"Authorization": REDACTED, "X-Trace": "t"},
    }
    assert kept["runtime"]["request_overrides"] == {"access_token": REDACTED, "top_k": 5}  # type: ignore[index]
    assert SessionSettings.model_validate(kept).llm.api_key_env == KEY_ENV
