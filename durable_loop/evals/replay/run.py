"""A replay eval: each recorded user message re-asked in a fresh session of the chosen
model and settings, its tool calls answered by :class:`ReplayTools`, and the replay read
back from the store the same way the original is.

Each message runs in a session of its own holding only that message: the earlier
messages of the recorded session are not carried into it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from durable_loop.client.connect import connect
from durable_loop.client.session_data import SessionData
from durable_loop.client.sessions import SessionClient
from durable_loop.client.trace.fetch import require_store
from durable_loop.core import presets
from durable_loop.core.config import SessionSettings
from durable_loop.evals.replay.compare import MessageResult, compare
from durable_loop.evals.replay.recorded import RecordedMessage, RecordedSession, recorded_session
from durable_loop.evals.replay.report import write_replay_report
from durable_loop.evals.replay.tools import ReplayTools
from durable_loop.store.database import Database
from durable_loop.store.engine import async_engine
from durable_loop.store.session_copy import transcript_rows
from durable_loop.store.transcript import TranscriptStore
from durable_loop.worker.builder import WorkerDeps, build_worker, new_http_client
from durable_loop.worker.settings import WorkerSettings

PRESETS = ("recorded", "production")
"""recorded: the session's own runtime settings; production: the catalog's settings for
the model (``presets.for_model``) over them."""

Choose = Callable[[SessionSettings], SessionSettings]


def replay_settings(model: str, preset: str = "recorded", base_url: str | None = None) -> Choose:
    def choose(recorded: SessionSettings) -> SessionSettings:
        changes: dict[str, object] = {"model": model}
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


async def replay_sessions(
    sessions: SessionClient,
    db: Database,
    tools: ReplayTools,
    recorded: list[tuple[RecordedSession, SessionSettings]],
    choose: Choose,
) -> list[MessageResult]:
    """Run every message on ``sessions``, whose worker serves ``tools.registry()``."""
    results = []
    for session, settings in recorded:
        chosen = choose(settings)
        for index, message in enumerate(session.messages, start=1):
            replay_id = f"replay-{session.session_id[:150]}-{index}-{uuid.uuid4().hex[:8]}"
            await sessions.start(replay_id, chosen)
            try:
                await sessions.send(replay_id, message.text)
            finally:
                await sessions.close(replay_id, "replay eval done")
            rows = await transcript_rows(db, replay_id)
            replayed = recorded_session(replay_id, rows).messages
            replay = replayed[0] if replayed else RecordedMessage(text=message.text)
            results.append(compare(session.session_id, index, replay_id, message, replay, tools))
    return results


async def execute_replay(
    worker: WorkerSettings, session_ids: list[str], choose: Choose, out: Path
) -> Path:
    """``durable-loop eval --from-sessions``: the sessions read from the server and store
    ``worker`` names, replayed on a worker of this process on a task queue of its own."""
    require_store(worker.db_url)
    store = TranscriptStore(async_engine(worker.db_url))
    try:
        client = await connect(worker.temporal)
        data = SessionData(SessionClient(client, task_queue=worker.task_queue), store.db)
        recorded = [await load_recorded(data, sid) for sid in session_ids]
        tools = ReplayTools.of([session for session, _ in recorded])
        queue = f"replay-eval-{uuid.uuid4().hex[:8]}"
        sessions = SessionClient(client, task_queue=queue)
        http = new_http_client()
        deps = WorkerDeps(store=store, registry=tools.registry(), http=http)
        try:
            async with build_worker(client, deps, task_queue=queue):
                results = await replay_sessions(sessions, store.db, tools, recorded, choose)
        finally:
            await http.aclose()
    finally:
        await store.close()
    return write_replay_report(out, results)
