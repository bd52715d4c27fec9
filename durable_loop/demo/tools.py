"""The demo's tools: a two-operation calculator and a per-session notebook.

Plain typed functions; ``demo_registry`` turns them into tool specs through
:class:`ToolRegistry`, so their docstrings and signatures are what the model sees.
"""

from __future__ import annotations

import math
import threading

from pydantic import BaseModel

from durable_loop.toolcalling.registry import ToolContext, ToolFailure, ToolRegistry

Number = int | float


def _tidy(value: float) -> Number:
    """Whole results come back as integers, so the model reads 441, not 441.0."""
    if not math.isfinite(value):
        raise ToolFailure("INVALID_ARGS", "the result is not a finite number")
    return int(value) if float(value).is_integer() else value


def add(a: float, b: float) -> Number:
    """Add two numbers and return the sum."""
    return _tidy(a + b)


def multiply(a: float, b: float) -> Number:
    """Multiply two numbers and return the product."""
    return _tidy(a * b)


class Note(BaseModel):
    id: int
    text: str


class Notebook:
    """Notes per session, in memory. A retried call (same idempotency key) adds nothing."""

    def __init__(self, max_chars: int = 500) -> None:
        self.max_chars = max_chars
        self._notes: dict[str, list[Note]] = {}
        self._by_key: dict[str, Note] = {}
        self._lock = threading.Lock()

    def notes(self, session_id: str) -> list[Note]:
        with self._lock:
            return list(self._notes.get(session_id, []))

    def note_add(self, text: str, ctx: ToolContext) -> Note:
        """Save a short note for later; returns the stored note with its id."""
        text = text.strip()
        if not text:
            raise ToolFailure("INVALID_ARGS", "text is empty: write the note's content")
        if len(text) > self.max_chars:
            raise ToolFailure("INVALID_ARGS", f"a note holds at most {self.max_chars} characters")
        with self._lock:
            done = self._by_key.get(ctx.idempotency_key)
            if done is not None:
                return done
            notes = self._notes.setdefault(ctx.session_id, [])
            note = Note(id=len(notes) + 1, text=text)
            notes.append(note)
            self._by_key[ctx.idempotency_key] = note
            return note

    def note_list(self, ctx: ToolContext) -> list[Note]:
        """List every note saved in this session, oldest first."""
        return self.notes(ctx.session_id)


def demo_registry(notebook: Notebook) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(multiply)
    registry.register(notebook.note_add, name="note_add")
    registry.register(notebook.note_list, name="note_list")
    return registry
