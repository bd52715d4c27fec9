"""``repeated_call_guard``: a call repeated with the same arguments in one message gets
the recorded result instead of running again, and the tools are withdrawn (carried out
by core/guards and the loop). An identical second call of a tool that does not exist,
refused once with TOOL_NOT_FOUND, is a repeat too (patch ``repeat-unknown-tool-call``)."""

from __future__ import annotations

from durable_loop.core.recoveries.base import Legacy, Recovery, RecoverySettings

NAME = "repeated_call_guard"


class RepeatedCallGuard(RecoverySettings):
    pass


RECOVERY = Recovery(
    name=NAME,
    settings=RepeatedCallGuard,
    stage="call",
    fixes="the same call again after its result: answered from the recorded result, "
    "tools withdrawn; also a made-up tool's identical second call (patch "
    "`repeat-unknown-tool-call`)",
    effect="scripted behaviour repeats_after_result: fails without it (max_turns), passes "
    "with it (on by default)",
    reported=False,
    on_by_default=True,
    legacy=Legacy(switch="repeated_call_guard"),
)
