"""Which settings sent with a message a running session did not apply.

A message sent by update-with-start carries a digest of the settings it would start the
session with (one short hash per top-level field). When the session already runs, those
settings are not applied; the session compares the digest with its own settings and the
``RunResult`` names the fields that differ, instead of ignoring them silently.

Digests are stored in histories (the message's input), so a field keeps the form it was
hashed in: ``runtime`` is hashed with its recoveries in their old flat keys
(``core/recoveries/legacy``), and a digest an older client sent means the same settings.
"""

from __future__ import annotations

from durable_loop.core.canonical_json import canonical_dumps, sha256_hex
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.recoveries.legacy import flat_form
from durable_loop.core.runtime_groups import flatten

CLIENT_MANAGED = frozenset({"search_attributes"})
"""Set by the client from what the namespace has registered, not by the user."""


def settings_digest(settings: SessionSettings) -> dict[str, str]:
    data = settings.model_dump(mode="json")
    data["runtime"] = runtime_digest_form(settings.runtime)
    return {
        field: sha256_hex(canonical_dumps(value))[:16]
        for field, value in data.items()
        if field not in CLIENT_MANAGED
    }


def runtime_digest_form(runtime: RuntimeConfig) -> dict[str, object]:
    """The runtime config as it dumped before ``recoveries`` and its groups (plus any
    recovery an application registered, which no old key can say)."""
    data: dict[str, object] = flatten(runtime.model_dump(mode="json", exclude={"recoveries"}))
    flat, rest = flat_form(runtime.recoveries)
    data.update(flat)
    if rest:
        data["recoveries"] = rest
    return data


def not_applied(sent: dict[str, str] | None, running: SessionSettings) -> list[str]:
    """The fields of the sent settings that differ from the session's own."""
    return differing(sent, settings_digest(running)) if sent else []


def differing(sent: dict[str, str], own: dict[str, str]) -> list[str]:
    return sorted(field for field, digest in sent.items() if own.get(field) != digest)


def not_applied_note(fields: list[str]) -> str:
    return (
        f"the session was already running: the settings sent with this message were not "
        f"applied ({', '.join(fields)} differ); change a running session's model with "
        f"switch_model and its budget with set_budget (`durable-loop budget`)"
    )
