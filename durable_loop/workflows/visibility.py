"""Search attributes that make a session readable (and findable) in the Temporal Web UI.

The session workflow keeps ``DurableLoopStatus``, ``DurableLoopModel``,
``DurableLoopPendingProposals``, ``DurableLoopTurns`` and ``DurableLoopTotalTokens``
current with typed upserts, one command per change. Upserting an attribute the namespace
does not know fails the workflow task on every retry, so this is opt-in per session
(``SessionSettings.search_attributes``): :class:`durable_loop.client.sessions.SessionClient` turns
it on only after it registered or found the attributes. Deterministic workflow code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

STATUS = SearchAttributeKey.for_keyword("DurableLoopStatus")
MODEL = SearchAttributeKey.for_keyword("DurableLoopModel")
PENDING_PROPOSALS = SearchAttributeKey.for_int("DurableLoopPendingProposals")
TURNS = SearchAttributeKey.for_int("DurableLoopTurns")
TOTAL_TOKENS = SearchAttributeKey.for_int("DurableLoopTotalTokens")

SEARCH_ATTRIBUTES: dict[str, str] = {
    STATUS.name: "Keyword",
    MODEL.name: "Keyword",
    PENDING_PROPOSALS.name: "Int",
    TURNS.name: "Int",
    TOTAL_TOKENS.name: "Int",
}
"""Name -> type, as ``temporal server start-dev --search-attribute NAME=TYPE`` wants them."""

MEMO_TITLE = "title"
MEMO_SESSION = "session_id"
PENDING_QUERY = f"{PENDING_PROPOSALS.name} > 0"
"""The visibility query of sessions with proposals or tool calls that wait for a person
(``DurableLoopPendingProposals`` counts both; ``DurableLoopStatus`` is
``awaiting_approval`` while a message's tool calls wait)."""


class VisibleState(NamedTuple):
    status: str
    model: str
    pending_proposals: int
    turns: int
    total_tokens: int


def _updates(new: VisibleState, old: VisibleState | None) -> list[SearchAttributeUpdate]:
    keys = (STATUS, MODEL, PENDING_PROPOSALS, TURNS, TOTAL_TOKENS)
    changes: list[SearchAttributeUpdate] = []
    for index, key in enumerate(keys):
        value = new[index]
        if old is None or old[index] != value:
            changes.append(key.value_set(value))  # type: ignore[attr-defined]
    return changes


def _current() -> VisibleState | None:
    """What the run already carries (set by a previous run before continue-as-new)."""
    attrs = workflow.info().typed_search_attributes
    status, model = attrs.get(STATUS), attrs.get(MODEL)
    pending, turns, tokens = attrs.get(PENDING_PROPOSALS), attrs.get(TURNS), attrs.get(TOTAL_TOKENS)
    if status is None or model is None or pending is None or turns is None or tokens is None:
        return None
    return VisibleState(status, model, pending, turns, tokens)


class SessionVisibility:
    """Upserts the session's search attributes whenever ``read()`` changes."""

    def __init__(self, enabled: bool, read: Callable[[], VisibleState]) -> None:
        self.enabled = enabled
        self._read = read
        self._last: VisibleState | None = None
        self._finished = False

    async def keep_current(self) -> None:
        """Run as a background task for the life of the run (no-op when disabled)."""
        if not self.enabled:
            return
        self._last = _current()
        while not self._finished:
            self._upsert(self._read())
            await workflow.wait_condition(lambda: not self._finished and self._read() != self._last)

    def finish(self, status: str = "closed") -> None:
        """The last upsert of the session; the background task stops changing anything."""
        if self.enabled:
            self._finished = True
            self._upsert(self._read()._replace(status=status))

    def _upsert(self, state: VisibleState) -> None:
        changes = _updates(state, self._last)
        if changes:
            workflow.upsert_search_attributes(changes)
            self._last = state
