"""Every recovery by name, in the order the loop judges them: the built-ins, then any an
application registers with :func:`register`.

Registering is process setup, like registering a tool: done once at import, before a
worker starts and wherever settings are built (clients validate the same names); no
workflow code registers anything, it only reads. Workers pass this module through the
workflow sandbox (``durable_loop.core`` is, see worker/sandbox; ``replay_failures`` passes
this package through too), so every run sees the recoveries its process registered."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from durable_loop.core.recoveries import (
    ask_for_unsaid_values,
    call_referred_tool,
    call_requested_tool,
    continue_after_repeat,
    correct_typed_answer,
    finalize_after_repeat,
    finalize_text_call_reply,
    finalize_when_done,
    fix_empty_final,
    refuse_unasked_call,
    repair_invalid_arguments,
    repeated_call_guard,
    retry_after_tool_error,
    shorten_oversized_arguments,
    withhold_tools_from_conversation,
)
from durable_loop.core.recoveries.base import Recovery, RecoverySettings, Stage


class RecoveryRegistry(dict[str, Recovery[Any]]):
    """Name -> record, in registration order."""

    def add(self, recovery: Recovery[Any]) -> Recovery[Any]:
        if self.get(recovery.name, recovery) is not recovery:
            raise ValueError(f"a recovery named {recovery.name!r} is already registered")
        self[recovery.name] = recovery
        return recovery


REGISTRY = RecoveryRegistry()

Enabled = dict[str, RecoverySettings]
"""Name -> settings of each recovery a config turns on, in registry order."""


def register(recovery: Recovery[Any]) -> Recovery[Any]:
    """Make ``recovery`` a name ``RuntimeConfig.recoveries`` accepts (judged after those
    registered before it)."""
    return REGISTRY.add(recovery)


BUILTINS = (
    fix_empty_final.RECOVERY,
    retry_after_tool_error.RECOVERY,
    correct_typed_answer.RECOVERY,
    repeated_call_guard.RECOVERY,
    finalize_text_call_reply.RECOVERY,
    continue_after_repeat.RECOVERY,
    finalize_after_repeat.RECOVERY,
    call_referred_tool.RECOVERY,
    call_requested_tool.RECOVERY,
    shorten_oversized_arguments.RECOVERY,
    repair_invalid_arguments.RECOVERY,
    withhold_tools_from_conversation.RECOVERY,
    refuse_unasked_call.RECOVERY,
    ask_for_unsaid_values.RECOVERY,
    finalize_when_done.RECOVERY,
)
for _builtin in BUILTINS:
    REGISTRY.add(_builtin)


def default_names() -> list[str]:
    return [r.name for r in REGISTRY.values() if r.on_by_default]


def as_mapping(value: object) -> dict[str, object]:
    """A list of names or a mapping name -> settings (False/None: off) as a mapping of the
    recoveries turned on; settings stay as given."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        return {str(name): {} for name in value}
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items() if v is not False and v is not None}
    raise ValueError("recoveries must be a list of names or a mapping name -> settings")


def enabled(value: object) -> Enabled:
    """Validate ``RuntimeConfig.recoveries``: each name registered, each settings model
    valid; the result in registry order (the order the loop judges in)."""
    wanted = as_mapping(value)
    unknown = sorted(set(wanted) - set(REGISTRY))
    if unknown:
        raise ValueError(f"unknown recoveries {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    out: Enabled = {}
    for name, recovery in REGISTRY.items():
        if name not in wanted:
            continue
        given = wanted[name]
        if isinstance(given, recovery.settings):
            out[name] = given
        else:
            raw = given.model_dump() if isinstance(given, BaseModel) else given
            out[name] = recovery.settings.model_validate(raw if raw is not True else {})
    return out


def default_enabled() -> Enabled:
    return enabled(default_names())


def judges(on: Enabled, stage: Stage) -> list[tuple[Recovery[Any], RecoverySettings]]:
    """The recoveries ``on`` turns on that judge at ``stage``, in order."""
    return [
        (REGISTRY[name], settings)
        for name, settings in on.items()
        if REGISTRY[name].stage == stage and REGISTRY[name].judge is not None
    ]
