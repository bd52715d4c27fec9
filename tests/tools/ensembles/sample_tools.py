"""Implementations bound by import path from the TOML descriptors in these tests."""

from __future__ import annotations

NOTES = {"groceries": "milk, eggs", "todo": "call mum"}


def read_note(title: str) -> str:
    return NOTES[title]


def word_count(text: str) -> int:
    return len(text.split())


not_callable = 42
