"""Transform names -> functions, one table per application point (``pipeline`` applies
them, in the order it documents)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from durable_loop.core.messages import ToolCall
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms import inbound, outbound
from durable_loop.core.transforms.inbound import InboundContext
from durable_loop.core.transforms.names import (
    MESSAGE_TRANSFORMS,
    RESPONSE_TRANSFORMS,
    TOOL_CALL_TRANSFORMS,
    TOOL_RESULT_TRANSFORMS,
    TOOL_TRANSFORMS,
)
from durable_loop.core.transforms.outbound import OutboundContext

Body = dict[str, JsonValue]


def _table(module: object, names: tuple[str, ...]) -> dict[str, Callable[..., Any]]:
    return {name: getattr(module, name) for name in names}


MESSAGE: dict[str, Callable[[Body], Body]] = _table(outbound, MESSAGE_TRANSFORMS)
TOOLS: dict[str, Callable[[list[ToolSpec], OutboundContext], list[ToolSpec]]] = _table(
    outbound, TOOL_TRANSFORMS
)
RESPONSE: dict[str, Callable[[Body, InboundContext], Body]] = _table(inbound, RESPONSE_TRANSFORMS)
TOOL_CALLS: dict[str, Callable[[list[ToolCall]], list[ToolCall]]] = _table(
    inbound, TOOL_CALL_TRANSFORMS
)
TOOL_RESULTS: dict[str, Callable[[Body], Body]] = _table(inbound, TOOL_RESULT_TRANSFORMS)
