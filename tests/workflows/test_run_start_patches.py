"""Patches a run could first ask right after a local activity are asked as it starts
(``workflows/run_start_patches.py``): their markers come before the run's first local
activity, so a Query answered while a local activity's result is pending cannot split them
off into a later workflow task."""

from __future__ import annotations

import json

from temporalio.client import WorkflowHistory

from durable_loop.client.history import fetch_histories
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.testing import reply
from durable_loop.testing.history import EventType
from durable_loop.tools.ensembles import Ensemble, EnsembleDefaults, registry_from
from durable_loop.workflows.run_start_patches import PATCH_ID, RUN_START_PATCHES
from tests.conftest import settings_for, unique


def local_maths() -> ToolRegistry:
    maths = Ensemble("maths", defaults=EnsembleDefaults(local=True, timeout_s=5))

    @maths.tool()
    def add(a: int, b: int, ctx: ToolContext) -> int:
        """Add two integers."""
        return a + b

    return registry_from([maths])


def markers(history: WorkflowHistory) -> list[tuple[int, str]]:
    """(event id, patch id, or ``local activity``) of each marker, in history order."""
    found: list[tuple[int, str]] = []
    for event in history.events:
        if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        details = event.marker_recorded_event_attributes.details
        if "patch-data" in details:
            data = json.loads(details["patch-data"].payloads[0].data)
            found.append((event.event_id, data["id"]))
        else:
            found.append((event.event_id, "local activity"))
    return found


async def test_a_new_run_records_them_before_its_first_local_activity(
    loop_worker, scripted_llm, temporal_env
):
    """A local tool's result is followed by ``finalize-when-done``'s check: the marker is
    already there, from the run's first workflow task, and is not recorded again."""
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model, [reply.tool_call("add", {"a": 37, "b": 43}), reply.text("37 + 43 is 80.")]
    )
    runtime = RuntimeConfig(recoveries=["finalize_when_done"])
    async with loop_worker(local_maths()) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model, runtime=runtime))
        result = await w.sessions.send(sid, "add 37 and 43")
        [history] = await fetch_histories(temporal_env.client, f"session-{sid}")
    assert result.status == "completed" and result.recoveries == ["finalize_when_done"]
    found = markers(history)
    first_local = next(i for i, (_, name) in enumerate(found) if name == "local activity")
    asked_first = [name for _, name in found[:first_local]]
    assert asked_first[: 1 + len(RUN_START_PATCHES)] == [PATCH_ID, *RUN_START_PATCHES]
    assert "cancel-message" in asked_first  # RunControl.start's, as before
    later = [name for _, name in found[first_local:] if name != "local activity"]
    assert not set(later) & {PATCH_ID, *RUN_START_PATCHES}
    assert sum(name == "local activity" for _, name in found) >= 2  # the catalog, the tool
