"""Changing a running session's budget: the ``set_budget`` Update's models and rules.

A change names who makes it and applies from the session's next message on; the session
records it in the audit log like a decision (``audit_session_change``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, JsonValue

if TYPE_CHECKING:  # annotations only: reading a budget needs no settings module
    from durable_loop.core.config import RuntimeConfig

BUDGET_COMMAND = "durable-loop budget SESSION --max-session-tokens N --as WHO"
"""The command a BUDGET_EXCEEDED message names: runnable once SESSION, N and WHO are filled
in (``--as`` is required: a change names who makes it)."""


class SessionBudget(BaseModel):
    max_session_tokens: int | None = Field(default=None, description="None: no limit")
    max_turns: int


class BudgetChange(BaseModel):
    """New budget values; a field left ``None`` keeps its value."""

    changed_by: str = Field(description="Who changes the budget (recorded in the audit log)")
    max_session_tokens: int | None = Field(default=None, ge=1)
    unlimited_tokens: bool = Field(default=False, description="Remove the token limit")
    max_turns: int | None = Field(default=None, ge=1, description="LLM turns per message")
    comment: str | None = None

    def changes(self) -> dict[str, JsonValue]:
        """The RuntimeConfig fields this change sets, with their new values."""
        out: dict[str, JsonValue] = {}
        if self.unlimited_tokens:
            out["max_session_tokens"] = None
        elif self.max_session_tokens is not None:
            out["max_session_tokens"] = self.max_session_tokens
        if self.max_turns is not None:
            out["max_turns"] = self.max_turns
        return out


class BudgetChangeResult(BaseModel):
    previous: SessionBudget
    budget: SessionBudget
    used_tokens: int = Field(description="Input + output tokens the session has spent")
    changed_by: str
    changed_at: datetime
    comment: str | None = None


class SessionChangeAudit(BaseModel):
    """Audit rows for a change to a session (target ``what``, one ``set`` per field)."""

    session_id: str
    workspace_id: str
    what: str
    changes: dict[str, JsonValue]
    actor: str
    comment: str | None = None
    key: str = Field(description="Idempotency key: a retried activity writes the rows once")


class SessionChangeAudited(BaseModel):
    version: int = Field(description="The workspace version the rows were recorded at")


def budget_of(config: RuntimeConfig) -> SessionBudget:
    return SessionBudget(max_session_tokens=config.max_session_tokens, max_turns=config.max_turns)


def budget_change_problem(change: BudgetChange) -> str | None:
    """Why the change must be refused, or ``None``."""
    if not change.changed_by.strip():
        return "changed_by (who changes the budget) is required"
    if "\x00" in change.changed_by + (change.comment or ""):
        return "changed_by or comment contains a NUL character"
    if change.unlimited_tokens and change.max_session_tokens is not None:
        return "give max_session_tokens or unlimited_tokens, not both"
    if not change.changes():
        return "nothing to change: give max_session_tokens, unlimited_tokens or max_turns"
    return None


def changed_config(config: RuntimeConfig, change: BudgetChange) -> RuntimeConfig:
    return config.model_copy(update=change.changes())
