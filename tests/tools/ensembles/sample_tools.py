"""Implementations bound by import path from the TOML descriptors in these tests."""

from __future__ import annotations

from durable_loop.core.registry import Reconciled

NOTES = {"groceries": "milk, eggs", "todo": "call mum"}


def read_note(title: str) -> str:
    return NOTES[title]


def word_count(text: str) -> int:
    return len(text.split())


not_callable = 42


def word_count_done(arguments: dict, ctx: object) -> Reconciled:
    """A reconcile check for ``word_count`` declared ``effect = "once"``."""
    return Reconciled.done(len(str(arguments.get("text", "")).split()))
