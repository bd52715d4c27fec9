"""The opt-in, model-facing workspace tool set: ``state_get``, ``state_patch``, ``facts_propose``.

``registry = my_tools.merged(workspace_tools(store))``. The workspace is implicit (the
session's, or ``SessionSettings.workspace.workspace_id``); a ``workspace_id`` argument is
optional and must name that workspace. There is deliberately no ``facts_commit`` tool:
facts change only when a person confirms a proposal (see ``docs/approvals.md``).
"""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry
from durable_loop.core.workspace_patch import OPS, WorkspaceError, proposal_id_for, read_path
from durable_loop.store.workspace import ChangeSource, WorkspaceStore
from durable_loop.store.workspace_proposals import propose

AWAITS_CONFIRMATION = (
    "Proposal {id} awaits a person's confirmation; facts are unchanged until then. "
    "Tell the user what you proposed. Do not propose the same change again."
)

_OP_ITEM: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": list(OPS)},
        "path": {"type": "string", "description": "JSON pointer, e.g. /title or /tags/0"},
        "value": {
            "type": ["string", "number", "integer", "boolean", "array", "object", "null"],
            "description": "Any JSON value (add, replace, test)",
        },
        "from": {"type": "string", "description": "JSON pointer (move, copy)"},
    },
    "required": ["op", "path"],
}
IMPLICIT_ARGS = ("workspace_id",)
"""Filled in by the runtime from the session (see ``session_workspace``)."""
_WORKSPACE_ID: dict[str, JsonValue] = {
    "type": "string",
    "description": "Optional; the session's workspace is used by default",
}

STATE_GET: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "target": {"type": "string", "enum": ["all", "facts", "draft"], "default": "all"},
        "path": {"type": "string", "description": "JSON pointer; empty for everything"},
        "workspace_id": _WORKSPACE_ID,
    },
}
STATE_PATCH: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "ops": {"type": "array", "items": _OP_ITEM, "minItems": 1},
        "base_version": {
            "type": "integer",
            "description": "Optional; refuse the patch if the workspace moved past it",
        },
        "workspace_id": _WORKSPACE_ID,
    },
    "required": ["ops"],
}
FACTS_PROPOSE: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "changes": {"type": "array", "items": _OP_ITEM, "minItems": 1},
        "summary": {"type": "string", "description": "One sentence for the person deciding"},
        "workspace_id": _WORKSPACE_ID,
    },
    "required": ["changes"],
}


def session_workspace(ctx: ToolContext, requested: str | None) -> str:
    """The session's own workspace; a blank ``workspace_id`` counts as left out (models
    fill optional strings with ""), any other id must be the session's own."""
    own = ctx.workspace_id or ctx.session_id
    if requested is not None and requested.strip() and requested != own:
        raise ToolFailure(
            ErrorCode.INVALID_ARGS,
            f"workspace_id {requested!r} is not this session's workspace ({own!r}). "
            "The workspace is implicit: omit workspace_id.",
        )
    return own


def source_of(ctx: ToolContext) -> ChangeSource:
    return ChangeSource(
        actor="model",
        actor_kind="model",
        session_id=ctx.session_id,
        turn=ctx.turn,
        call_id=ctx.call_id,
        idempotency_key=ctx.idempotency_key,
    )


def coded(err: WorkspaceError) -> ToolFailure:
    return ToolFailure(err.code, err.message)


def workspace_tools(store: WorkspaceStore) -> ToolRegistry:
    registry = ToolRegistry()

    async def state_get(
        ctx: ToolContext, target: str = "all", path: str = "", workspace_id: str | None = None
    ) -> dict[str, JsonValue]:
        own = session_workspace(ctx, workspace_id)
        snap = await store.snapshot(own)
        out: dict[str, JsonValue] = {
            "workspace_id": own,
            "version": snap.version,
            "facts_version": snap.facts_version,
            "locks": list(snap.locks),
        }
        targets = ["facts", "draft"] if target == "all" else [target]
        missing = []
        for name in targets:
            try:
                out[name] = read_path(snap.facts if name == "facts" else snap.draft, path)
            except WorkspaceError as err:
                if target != "all":
                    raise coded(err) from None
                missing.append(name)
        if missing and len(missing) == len(targets):
            raise ToolFailure(ErrorCode.INVALID_ARGS, f"nothing at {path!r} in facts or draft")
        if path:
            out["path"] = path
        return out

    async def state_patch(
        ops: list[JsonValue],
        ctx: ToolContext,
        base_version: int | None = None,
        workspace_id: str | None = None,
    ) -> dict[str, JsonValue]:
        own = session_workspace(ctx, workspace_id)
        try:
            result = await store.apply(
                own, "draft", ops, source_of(ctx), expected_version=base_version
            )
        except WorkspaceError as err:
            raise coded(err) from None
        return {"workspace_id": own, "version": result.version, "changed": list(result.paths)}

    async def facts_propose(
        changes: list[JsonValue],
        ctx: ToolContext,
        summary: str | None = None,
        workspace_id: str | None = None,
    ) -> Envelope:
        own = session_workspace(ctx, workspace_id)
        proposal_id = proposal_id_for(ctx.idempotency_key)
        try:
            notice = await propose(
                store, own, changes, source_of(ctx), proposal_id=proposal_id, summary=summary
            )
        except WorkspaceError as err:
            raise coded(err) from None
        data: dict[str, JsonValue] = {
            "proposal_id": notice.proposal_id,
            "status": "awaiting_confirmation",
            "paths": list(notice.paths),
            "fingerprint": notice.fingerprint,
            "message": AWAITS_CONFIRMATION.format(id=notice.proposal_id),
        }
        return Envelope(ok=True, data=data, proposal=notice)

    registry.register(
        state_get,
        description="Read the workspace: facts (confirmed), draft (working copy), locks. "
        "Optionally one JSON-pointer path.",
        parameters=STATE_GET,
        implicit_args=IMPLICIT_ARGS,
    )
    registry.register(
        state_patch,
        description="Edit the draft with JSON-patch ops (add, remove, replace, move, copy, "
        "test). All ops apply or none. Locked paths cannot change.",
        parameters=STATE_PATCH,
        implicit_args=IMPLICIT_ARGS,
    )
    registry.register(
        facts_propose,
        description="Propose a change to the facts (JSON-patch ops). A person must confirm "
        "it; you get a proposal id and learn the outcome later.",
        parameters=FACTS_PROPOSE,
        implicit_args=IMPLICIT_ARGS,
    )
    return registry
