"""A replay eval: each recorded user message re-asked in a fresh session of the chosen
model and settings, its tool calls answered by :class:`ReplayTools`, and the replay read
back from the store the same way the original is.

Each message runs in a session of its own forked from the recorded session at the turn
before it, so the model sees the earlier conversation as the original model saw it.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from durable_loop.client.connect import connect
from durable_loop.client.session_data import SessionData
from durable_loop.client.sessions import SessionClient
from durable_loop.client.trace.fetch import require_store
from durable_loop.core import presets
from durable_loop.core.config import SessionSettings
from durable_loop.core.errors import DurableLoopError
from durable_loop.core.registry import ToolRegistry
from durable_loop.evals.replay.compare import MessageResult, compare, not_replayed
from durable_loop.evals.replay.judge import Judge
from durable_loop.evals.replay.recorded import RecordedMessage, RecordedSession, recorded_session
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.tools import ReplayTools
from durable_loop.store.database import Database
from durable_loop.store.engine import async_engine
from durable_loop.store.session_copy import transcript_rows
from durable_loop.store.transcript import TranscriptStore
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.worker.settings import WorkerSettings

log = logging.getLogger(__name__)

PRESETS = ("recorded", "production")
"""recorded: the session's own runtime settings; production: the catalog's settings for
the model (``presets.for_model``) over them."""

Choose = Callable[[SessionSettings], SessionSettings]


LOCAL_ENDPOINT: dict[str, object] = {"provider": "openai", "api_prefix": "/v1", "api_key_env": None}
"""What ``--local`` changes of the recorded endpoint, besides the base URL: the local
model speaks the OpenAI API and needs no key."""


def replay_settings(
    model: str,
    preset: str = "recorded",
    base_url: str | None = None,
    endpoint: Mapping[str, object] | None = None,
) -> Choose:
    """The recorded settings with ``model`` (and ``base_url``, and the ``endpoint`` fields
    given) as the LLM, without fallbacks; ``production`` adds the catalog's settings."""

    def choose(recorded: SessionSettings) -> SessionSettings:
        changes: dict[str, object] = {**(endpoint or {}), "model": model}
        if base_url is not None:
            changes["base_url"] = base_url
        llm = recorded.llm.model_copy(update=changes)
        runtime = recorded.runtime
        if preset == "production":
            runtime = presets.apply(presets.for_model(llm.provider, model), base=runtime)
        return recorded.model_copy(update={"llm": llm, "runtime": runtime, "fallback_llms": []})

    return choose


async def load_recorded(
    data: SessionData, session_id: str
) -> tuple[RecordedSession, SessionSettings]:
    """The session's rows and settings (as its export holds them: without secrets)."""
    bundle = await data.export(session_id)
    return recorded_session(session_id, bundle.rows), bundle.session_settings()


async def start_replay(
    data: SessionData,
    session_id: str,
    index: int,
    message: RecordedMessage,
    chosen: SessionSettings,
) -> str:
    """The replay session of message ``index``, started. Raises what ``fork`` refuses
    (STALE_VERSION: the facts changed after that turn, and cannot be rebuilt as they were)."""
    replay_id = f"replay-{session_id[:150]}-{index}-{uuid.uuid4().hex[:8]}"
    if message.fork_turn:
        await data.fork(session_id, message.fork_turn, replay_id, settings=chosen)
    else:
        await data.sessions.start(replay_id, chosen)
    return replay_id


async def replay_message(
    data: SessionData, replay_id: str, message: RecordedMessage
) -> RecordedMessage:
    """The message re-asked in its replay session (:func:`start_replay`): a fork of the
    recorded session at the turn before it (the conversation as the original model saw
    it, nothing re-run), or a fresh session for a first message."""
    try:
        await data.sessions.send(replay_id, message.text)
    finally:
        await data.sessions.close(replay_id, "replay eval done")
    replayed = recorded_session(replay_id, await transcript_rows(data.db, replay_id)).messages
    return replayed[-1] if replayed else RecordedMessage(text=message.text)


async def replay_sessions(
    sessions: SessionClient,
    db: Database,
    tools: ReplayTools,
    recorded: list[tuple[RecordedSession, SessionSettings]],
    choose: Choose,
    judge: Judge | None = None,
) -> list[MessageResult]:
    """Run every message on ``sessions``, whose worker serves ``tools.registry()``."""
    data = SessionData(sessions, db)
    results = []
    for session, settings in recorded:
        chosen = choose(settings)
        for index, message in enumerate(session.messages, start=1):
            try:
                replay_id = await start_replay(data, session.session_id, index, message, chosen)
            except DurableLoopError as refused:
                log.warning(
                    "replay of %s message %d: not replayed (%s)",
                    session.session_id,
                    index,
                    refused,
                )
                results.append(not_replayed(session.session_id, index, message, refused))
                continue
            replay = await replay_message(data, replay_id, message)
            result = compare(session.session_id, index, replay_id, message, replay, tools)
            if judge is not None:
                result.judge = await judge.verdict(message.text, message.answer, replay.answer)
            results.append(result)
    return results


@dataclass(frozen=True)
class ToolSource:
    """``--tools`` (their schemas offered, and with ``run_new`` their bodies run for new
    calls) and ``--judge-model`` (on the endpoint the replay model is asked on)."""

    given: ToolRegistry | None = None
    run_new: bool = False
    judge_model: str | None = None


def judge_for(source: ToolSource, chosen: SessionSettings, http: httpx.AsyncClient) -> Judge | None:
    if source.judge_model is None:
        return None
    endpoint = chosen.llm.model_copy(update={"model": source.judge_model})
    return Judge(endpoint, http, os.environ)


async def execute_replay(
    worker: WorkerSettings,
    session_ids: list[str],
    choose: Choose,
    out: Path,
    source: ToolSource = ToolSource(),
) -> Path:
    """``durable-loop eval --from-sessions``: the sessions read from the server and store
    ``worker`` names, replayed on a worker of this process on a task queue of its own."""
    require_store(worker.db_url)
    store = TranscriptStore(async_engine(worker.db_url))
    try:
        client = await connect(worker.temporal)
        data = SessionData(SessionClient(client, task_queue=worker.task_queue), store.db)
        recorded = [await load_recorded(data, sid) for sid in session_ids]
        tools = ReplayTools.of(
            [session for session, _ in recorded], source.given, run_new=source.run_new
        )
        queue = f"replay-eval-{uuid.uuid4().hex[:8]}"
        sessions = SessionClient(client, task_queue=queue)
        http = new_http_client()
        deps = WorkerDeps(store=store, registry=tools.registry(), http=http)
        judge = judge_for(source, choose(recorded[0][1]), http) if recorded else None
        try:
            async with build_worker(client, deps, task_queue=queue):
                results = await replay_sessions(sessions, store.db, tools, recorded, choose, judge)
        finally:
            await http.aclose()
    finally:
        await store.close()
    return write_replay_report(
        out, results, tool_schemas=tools.schema_source, names_only=tools.names_only
    )
