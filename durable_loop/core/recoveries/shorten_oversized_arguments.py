"""``shorten_oversized_arguments``: a call refused with ARGUMENTS_TOO_LARGE gets one
focused request and is re-issued with the shorter value (carried out by
workflows/argument_repair; the request is core/argument_repair)."""

from __future__ import annotations

from durable_loop.core.recoveries.base import Legacy, Recovery, RecoverySettings

NAME = "shorten_oversized_arguments"


class ShortenOversizedArguments(RecoverySettings):
    pass


RECOVERY = Recovery(
    name=NAME,
    settings=ShortenOversizedArguments,
    stage="refused_call",
    fixes="ARGUMENTS_TOO_LARGE: one focused request (the longest value, its budget, no "
    "tools); the call is re-issued once per message",
    effect="scripted behaviour ignores_size_errors: fails without it, passes with it; local "
    "Qwen long_arguments_guard 0/5 before and after",
    patch_id="argument-repair",
    legacy=Legacy(switch="shorten_oversized_arguments"),
)
