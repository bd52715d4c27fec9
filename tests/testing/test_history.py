"""The replay helpers the loop_worker fixture runs on teardown catch incompatible code."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from durable_loop.core import names
from durable_loop.core.contracts import SessionEnd, SessionInput
from durable_loop.testing import reply
from durable_loop.testing.history import EventType, events_of, replay_failures
from tests.conftest import settings_for, unique
from tests.workflows.toolkit import ToolLog, recording_tools


@workflow.defn(name=names.SESSION_WORKFLOW)
class TimerFirstSession:
    """A changed workflow: it sleeps where the real one loads the tool catalog."""

    @workflow.run
    async def run(self, inp: SessionInput) -> SessionEnd:
        await workflow.sleep(timedelta(seconds=1))
        return SessionEnd(session_id=inp.session_id, reason="x", messages_done=0, turns_total=0)


async def test_recorded_history_replays_and_changed_code_does_not(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("add", {"a": 1, "b": 2}), reply.text("3")])
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "1+2?")
        histories = await w.histories(sid)

    assert len(histories) == 1
    assert len(events_of(histories[0], EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)) == 3
    assert await replay_failures(histories) == {}
    failures = await replay_failures(histories, workflows=[TimerFirstSession])
    assert list(failures) == [histories[0].run_id]
    assert "Nondeterminism" in next(iter(failures.values()))
