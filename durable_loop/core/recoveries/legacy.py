"""The flat recovery keys ``RuntimeConfig`` had before ``recoveries``
(``fix_empty_final``, ``call_requested_tool_text``, ``output_retries``, ...).

Stored workflow histories and users' settings files still carry them: :func:`upgrade`
turns them into ``recoveries`` (the config's before-validator), :func:`notes` says which
new key each old one became (the CLI prints it), and :func:`flat_form` renders a config's
recoveries in the old keys, so a settings digest computed by an older client still means
the same settings (core/settings_digest).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, JsonValue

from durable_loop.core.recoveries.base import Recovery
from durable_loop.core.recoveries.registry import REGISTRY, Enabled, as_mapping, default_names


def _with_legacy() -> list[Recovery[Any]]:
    return [r for r in REGISTRY.values() if r.legacy is not None]


def old_keys() -> dict[str, str]:
    """Old key -> the new key it became."""
    keys: dict[str, str] = {}
    for r in _with_legacy():
        assert r.legacy is not None
        new = f"recoveries.{r.name}"
        keys[r.legacy.switch] = f"{new}.attempts" if r.legacy.counts else new
        keys.update({old: f"{new}.{field}" for old, field in r.legacy.fields.items()})
    return keys


def notes(runtime: object, moved: dict[str, str] | None = None) -> list[str]:
    """One line per old key in a settings file's ``runtime`` table (``moved``: other old
    keys and the new key of each, e.g. the grouped fields)."""
    if not isinstance(runtime, dict):
        return []
    keys = {**old_keys(), **(moved or {})}
    return [
        f"settings: runtime.{old} is read as runtime.{keys[old]} (the old key still works)"
        for old in runtime
        if old in keys
    ]


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its old flat recovery keys folded into ``recoveries``."""
    if not any(key in data for key in old_keys()):
        return data
    data = dict(data)
    given = data.get("recoveries", default_names())
    on: dict[str, dict[str, Any]] = {name: _raw(value) for name, value in as_mapping(given).items()}
    for r in _with_legacy():
        legacy = r.legacy
        assert legacy is not None
        if legacy.switch in data:
            switch = data.pop(legacy.switch)
            if not switch:
                on.pop(r.name, None)
            else:
                on.setdefault(r.name, {})
                if legacy.counts:
                    on[r.name]["attempts"] = switch
        for old, field in legacy.fields.items():
            if old in data:
                value = data.pop(old)
                if r.name in on:
                    on[r.name][field] = value
    data["recoveries"] = on
    return data


def _raw(value: object) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.model_dump()
    return dict(value) if isinstance(value, dict) else {}


def flat_form(on: Enabled) -> tuple[dict[str, JsonValue], dict[str, JsonValue]]:
    """The old flat keys of the built-in recoveries, exactly as an old config dumped them,
    and the recoveries no old key can say (registered by an application)."""
    flat: dict[str, JsonValue] = {}
    for r in _with_legacy():
        legacy = r.legacy
        assert legacy is not None
        settings = on.get(r.name)
        shown = settings if settings is not None else r.settings()
        if legacy.counts:
            count = shown.model_dump()["attempts"] if settings is not None else 0
            default = r.settings().model_dump()["attempts"] if r.on_by_default else 0
            if not (legacy.omit_default and count == default):
                flat[legacy.switch] = count
        else:
            flat[legacy.switch] = settings is not None
        dumped = shown.model_dump(mode="json")
        if settings is None:
            dumped.update(legacy.dumped_when_off)
        flat.update({old: dumped[field] for old, field in legacy.fields.items()})
    rest: dict[str, JsonValue] = {
        name: s.model_dump(mode="json") for name, s in on.items() if REGISTRY[name].legacy is None
    }
    return flat, rest
