"""The named argument recoveries, as the message loop runs them.

After a turn's calls are recorded, the first call refused with a code an enabled
recovery repairs (``shorten_oversized_arguments``: ARGUMENTS_TOO_LARGE;
``repair_invalid_arguments``: INVALID_ARGS, INVALID_JSON) gets one ``repair_tool_call``
activity, once per recovery per message. Its repaired call (a synthetic assistant message)
then goes through the loop's checks and runs like any call. New commands, so behind the
``argument-repair`` patch, asked only when a repair is due. Deterministic workflow code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_refs import REPAIR_TOOL_CALL
    from durable_loop.core.argument_repair import (
        REPAIRED_CODES,
        RepairCallInput,
        RepairCallOutput,
        RepairKind,
        repair_kind,
    )
    from durable_loop.core.config import SessionSettings
    from durable_loop.core.guards import CallDecision
    from durable_loop.core.tools import ToolSpec

from durable_loop.workflows.activity_calls import run_activity
from durable_loop.workflows.run_control import RunControl
from durable_loop.workflows.tool_placement import heartbeat_timeout

PATCH_ID = "argument-repair"

Outcomes = dict[int, tuple[bool, list[str], str | None]]


class ArgumentRepairs:
    def __init__(
        self, session_id: str, settings: SessionSettings, specs: dict[str, ToolSpec]
    ) -> None:
        self.session_id = session_id
        self.settings = settings
        self.specs = specs
        config = settings.runtime
        self.enabled: set[RepairKind] = {k for k in REPAIRED_CODES if config.uses(k)}
        self.used: set[RepairKind] = set()

    def due(
        self, decisions: list[CallDecision], outcomes: Outcomes
    ) -> tuple[CallDecision, RepairKind, str] | None:
        """The first refused call an enabled, unused recovery repairs."""
        if not self.enabled:
            return None
        for decision in decisions:
            ok, codes, failure = outcomes.get(decision.result_seq, (True, [], None))
            if ok or decision.call.name not in self.specs:
                continue
            kind = repair_kind(codes, self.enabled, self.used)
            if kind is not None:
                return decision, kind, failure or ", ".join(codes)
        return None

    async def run(
        self,
        *,
        due: tuple[CallDecision, RepairKind, str],
        assistant_seq: int,
        repair_seq: int,
        turn: int,
        control: RunControl,
        retry: RetryPolicy,
        offered: list[str] | None,
    ) -> RepairCallOutput | None:
        """Run the repair activity; None when the patch is absent (an older run) or the
        activity failed (the loop goes on as without the recovery). ``offered`` asks for
        the repaired call's request_left (see RepairCallInput)."""
        decision, kind, error = due
        if not workflow.patched(PATCH_ID):
            return None
        self.used.add(kind)
        endpoint = self.settings.llm
        config = self.settings.runtime
        inp = RepairCallInput(
            session_id=self.session_id,
            endpoint=endpoint,
            kind=kind,
            assistant_seq=assistant_seq,
            call_index=decision.call.index,
            repair_seq=repair_seq,
            turn=turn,
            error=error,
            max_args_bytes=config.max_tool_args_bytes,
            tool_schema=self.specs[decision.call.name].parameters,
            offered=offered,
        )
        call = run_activity(
            REPAIR_TOOL_CALL,
            inp,
            start_to_close_timeout=timedelta(seconds=endpoint.timeout_s + 15),
            heartbeat_timeout=heartbeat_timeout(config),
            retry_policy=retry,
            cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            summary=f"repair: {kind} for {decision.call.name} ({decision.call.id})",
        )
        try:
            return await control.guard(call)
        except ActivityError:
            return None
