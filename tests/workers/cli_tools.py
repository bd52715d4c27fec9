"""Tools loaded by the worker command in tests (``--tools tests.workers.cli_tools:registry``)."""

from durable_loop.toolcalling.registry import ToolRegistry


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool()
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    return tools


not_a_registry = 42
