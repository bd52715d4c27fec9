"""What a tool does, in a few words, as finalization requests show it beside its results."""

from __future__ import annotations

import pytest

from durable_loop.core.tools import PURPOSE_CHARS, tool_purpose


@pytest.mark.parametrize(
    ("description", "purpose"),
    [
        (
            "Save a short note for later; returns the stored note with its id.",
            "Save a short note for later",
        ),
        (
            "List every note saved in this session, oldest first.",
            "List every note saved in this session, oldest first",
        ),
        ("Get the weather: city name, units.", "Get the weather"),
        ("Add 2.5 to x. Then more.", "Add 2.5 to x"),
        ("Search the web\nArgs: query", "Search the web"),
        ("  ", ""),
    ],
)
def test_the_purpose_is_the_first_clause(description: str, purpose: str) -> None:
    assert tool_purpose(description) == purpose


def test_a_long_first_clause_is_cut_at_a_word() -> None:
    purpose = tool_purpose("word " * 40)
    assert len(purpose) <= PURPOSE_CHARS and purpose.endswith("word…")
