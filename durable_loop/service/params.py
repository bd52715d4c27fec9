"""What the JSON endpoints share: path and header parameters, the caller's identity, the
deps, and the coded error replies every router documents."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Path

from durable_loop.core.session_ids import SESSION_ID_RULE, SessionIdText
from durable_loop.service.auth import require_identity
from durable_loop.service.deps import ServiceDeps, deps_of
from durable_loop.service.errors import ErrorBody
from durable_loop.service.models import IDEMPOTENCY_KEY_PATTERN

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody},
    404: {"model": ErrorBody},
    409: {"model": ErrorBody},
    413: {"model": ErrorBody},
}

Identity = Annotated[str, Depends(require_identity)]
SessionId = Annotated[SessionIdText, Path(description=f"A session id: {SESSION_ID_RULE}")]
ProposalId = Annotated[str, Path(min_length=1, max_length=200)]
CallId = Annotated[str, Path(min_length=1, max_length=200)]
Deps = Annotated[ServiceDeps, Depends(deps_of)]

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=IDEMPOTENCY_KEY_PATTERN,
        description="A retried POST with the same key returns the first reply "
        "instead of starting a second turn",
    ),
]
