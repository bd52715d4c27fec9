"""Tool specs generated from typed Python functions."""

from __future__ import annotations

from typing import Literal

import pytest

from durable_loop.core.registry import ToolContext, ToolRegistry, schema_from_function
from durable_loop.core.retry import RetrySettings
from durable_loop.core.tools import ToolCatalog, ToolSpec, visible_tool_names


def search(query: str, limit: int = 10, lang: str | None = None, ctx: ToolContext | None = None):
    """Search the notes.

    Longer explanation that is not part of the description.
    """
    return []


def test_schema_has_types_defaults_and_required():
    schema = schema_from_function(search)
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert props["query"] == {"type": "string"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert props["lang"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert "ctx" not in props and "title" not in schema


def test_literal_and_nested_types():
    def pick(mode: Literal["fast", "slow"], weights: list[float], tags: dict[str, int]) -> str:
        return mode

    props = schema_from_function(pick)["properties"]
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["weights"] == {"items": {"type": "number"}, "type": "array"}
    assert props["tags"] == {"additionalProperties": {"type": "integer"}, "type": "object"}


def test_function_without_parameters_gets_an_empty_object_schema():
    def ping() -> str:
        return "pong"

    assert schema_from_function(ping) == {
        "properties": {},
        "type": "object",
        "additionalProperties": False,
    }


def test_register_uses_the_docstring_summary_and_detects_context():
    registry = ToolRegistry()
    tool = registry.register(search, timeout_s=5, retry=RetrySettings(maximum_attempts=1))
    assert tool.spec.description == "Search the notes."
    assert tool.spec.timeout_s == 5 and tool.spec.retry.maximum_attempts == 1
    assert tool.takes_context is True and tool.is_async is False
    assert registry.names() == ["search"] and registry.get("search") is tool


def test_decorator_with_overrides():
    registry = ToolRegistry()

    @registry.tool(name="lookup", description="Look a word up.")
    async def _lookup(word: str) -> str:
        return word

    (spec,) = registry.specs()
    assert (spec.name, spec.description) == ("lookup", "Look a word up.")
    assert registry.get("lookup").is_async is True


@pytest.mark.parametrize("bad", ["Bad.Name", "-name", "1tool", "two words", "x" * 65])
def test_names_that_are_not_cross_provider_safe_are_refused(bad):
    with pytest.raises(ValueError, match="not cross-provider safe"):
        ToolRegistry().register(search, name=bad)


def test_duplicate_names_and_varargs_are_refused():
    registry = ToolRegistry()
    registry.register(search)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(search)

    def spread(*items: int) -> int:
        return 0

    with pytest.raises(ValueError, match=r"\*args"):
        schema_from_function(spread)


def test_specs_follow_the_requested_names_and_skip_unknown_ones():
    registry = ToolRegistry()
    registry.register(search)
    registry.register(search, name="search_two")
    assert [s.name for s in registry.specs(["search_two", "nope", "search"])] == [
        "search_two",
        "search",
    ]
    merged = registry.merged(ToolRegistry())
    assert len(merged) == 2 and merged.catalog().tools == registry.catalog().tools


def test_masking_applies_allowlist_then_denylist():
    catalog = ToolCatalog(tools=[ToolSpec(name=n) for n in ["a", "b", "c"]])
    assert visible_tool_names(catalog, None, []) == ["a", "b", "c"]
    assert visible_tool_names(catalog, ["a", "b"], ["b"]) == ["a"]
    assert visible_tool_names(catalog, [], []) == []
