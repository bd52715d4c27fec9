"""Loading the application's tools from ``package.module:attribute``."""

from __future__ import annotations

import importlib

from durable_loop.core.errors import ConfigError
from durable_loop.core.registry import ToolRegistry


def load_registry(target: str | None) -> ToolRegistry:
    """The attribute may be a :class:`ToolRegistry` or a zero-argument callable returning
    one. ``None`` gives an empty registry (the model then gets no tools)."""
    if not target:
        return ToolRegistry()
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(
            f"cannot import tools module {module_name!r} ({err}); check --tools / "
            "DURABLE_LOOP_TOOLS and that the module is on PYTHONPATH"
        ) from None
    try:
        value = getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if not isinstance(value, ToolRegistry) and callable(value):
        value = value()
    if not isinstance(value, ToolRegistry):
        raise ConfigError(
            f"{target} is a {type(value).__name__}, expected a ToolRegistry or a "
            "zero-argument callable returning one"
        )
    return value
