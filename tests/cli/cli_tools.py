"""Tools loaded by the worker command in tests (``--tools tests.cli.cli_tools:registry``)."""

from durable_loop.core.registry import ToolRegistry


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool()
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    return tools


not_a_registry = 42
