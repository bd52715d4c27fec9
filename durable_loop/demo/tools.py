"""The demo's tools: the everyday calculator and notebook (:mod:`durable_loop.tools.everyday`)."""

from __future__ import annotations

from durable_loop.core.registry import ToolRegistry
from durable_loop.tools.everyday import Note, Notebook, calculate, demo_registry

__all__ = ["Note", "Notebook", "calculate", "demo_registry", "registry"]


def registry() -> ToolRegistry:
    """``--tools durable_loop.demo.tools:registry``: the demo's tools with a fresh notebook."""
    return demo_registry(Notebook())
