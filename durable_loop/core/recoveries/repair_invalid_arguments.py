"""``repair_invalid_arguments``: a call that failed with INVALID_ARGS or INVALID_JSON gets
one focused request (schema, arguments, error) and is re-issued with the repaired
arguments (carried out by workflows/argument_repair)."""

from __future__ import annotations

from durable_loop.core.recoveries.base import Legacy, Recovery, RecoverySettings

NAME = "repair_invalid_arguments"


class RepairInvalidArguments(RecoverySettings):
    pass


RECOVERY = Recovery(
    name=NAME,
    settings=RepairInvalidArguments,
    stage="refused_call",
    fixes="INVALID_ARGS / INVALID_JSON: one focused request (schema, arguments, error; JSON "
    "only, no tools); the call is re-issued once per message",
    effect="local Qwen2.5-Coder, everyday_fixable_error 0/1 -> 1/1 (2^20 -> 2**20)",
    patch_id="argument-repair",
    legacy=Legacy(switch="repair_invalid_arguments"),
)
