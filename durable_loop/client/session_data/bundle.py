"""The portable session bundle: one JSON document holding what a session is as data.

``format_version`` says how to read it; a reader refuses a bundle newer than it knows
(BUNDLE_VERSION_UNSUPPORTED). Settings are kept without secrets: an endpoint names the
environment variable holding its key (``api_key_env``), never the key, and values under
secret-looking names in free-form mappings (request options, overrides) are replaced by
:data:`REDACTED`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.config import SessionSettings
from durable_loop.core.errors import DurableLoopError, ErrorCode
from durable_loop.core.messages import Usage
from durable_loop.store.session_copy import RowCopy, WorkspaceCopy

FORMAT_VERSION = 1
REDACTED = "<redacted>"
SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "authorization", "credential", "cookie"}
)
"""A mapping key with one of these as a word (split at ``_``, ``-``, ``.``; any case)
holds a secret: ``api_key``, ``X-Api-Key``, ``Authorization``, ``access_token``, but not
``max_tokens``. ``api_key_env`` (the name of a variable, not its value) is the exception."""


class Decision(BaseModel):
    """A person's (or the system's) decision on a held tool call or a proposal."""

    target: Literal["tool", "proposal"]
    verdict: str = Field(description="The audit op (approve, reject, ...); confirm reads approve")
    actor: str
    actor_kind: str
    turn: int | None = None
    call_id: str | None = None
    proposal_id: str | None = None
    path: str = ""
    comment: str | None = None
    decided_at: datetime | None = None


class SessionBundle(BaseModel):
    format_version: int = FORMAT_VERSION
    kind: Literal["durable-loop.session"] = "durable-loop.session"
    session_id: str = Field(description="The session exported (imports take a new id)")
    exported_at: datetime
    forked_from: str | None = Field(
        default=None, description="'SESSION@TURN' when the exported session is a fork"
    )
    settings: dict[str, JsonValue] = Field(description="SessionSettings without secrets")
    usage: Usage
    turns: int
    messages: int
    rows: list[RowCopy] = Field(description="The transcript, oldest first, seqs as stored")
    workspace: WorkspaceCopy
    decisions: list[Decision] = Field(
        default_factory=list,
        description="Read from the workspace audit (kept whole in workspace.audit): who "
        "decided what",
    )

    def session_settings(self) -> SessionSettings:
        return SessionSettings.model_validate(self.settings)


def read_bundle(text: str | bytes) -> SessionBundle:
    """Parse a bundle, refusing one of a newer format before reading the rest."""
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise DurableLoopError(ErrorCode.INVALID_JSON, f"not a bundle: {err}") from None
    return bundle_from(raw)


def bundle_from(raw: object) -> SessionBundle:
    """A bundle from parsed JSON (BUNDLE_VERSION_UNSUPPORTED for a newer format)."""
    version = raw.get("format_version") if isinstance(raw, dict) else None
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise DurableLoopError(
            ErrorCode.BUNDLE_VERSION_UNSUPPORTED,
            f"bundle format_version {version!r}: this durable-loop reads versions 1 to "
            f"{FORMAT_VERSION}; import it with a newer durable-loop",
        )
    return SessionBundle.model_validate(raw)


def without_secrets(settings: SessionSettings) -> dict[str, JsonValue]:
    dumped: dict[str, JsonValue] = settings.model_dump(mode="json", exclude_unset=True)
    cleaned = _scrub(dumped)
    assert isinstance(cleaned, dict)
    return cleaned


def _scrub(value: JsonValue) -> JsonValue:
    if isinstance(value, dict):
        return {k: REDACTED if _secret(k) else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _secret(key: str) -> bool:
    lowered = key.lower()
    words = set(re.split(r"[_\-.\s]+", lowered))
    return lowered != "api_key_env" and bool(words & SECRET_WORDS)


def decisions_in(workspace: WorkspaceCopy) -> list[Decision]:
    found: list[Decision] = []
    for row in workspace.audit:
        target = row.get("target")
        if target not in ("tool", "proposal"):
            continue
        decided_at = row.get("created_at")
        found.append(
            Decision(
                target=target,
                verdict=_word(str(row.get("op"))),
                actor=str(row.get("actor")),
                actor_kind=str(row.get("actor_kind")),
                turn=_int(row.get("turn")),
                call_id=_str(row.get("call_id")),
                proposal_id=_str(row.get("proposal_id")),
                path=str(row.get("path") or ""),
                comment=_str(row.get("comment")),
                decided_at=decided_at if isinstance(decided_at, datetime) else None,
            )
        )
    return found


def _word(op: str) -> str:
    """Older audit rows say ``confirm`` for what every surface now calls approve."""
    return "approve" if op == "confirm" else op


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
