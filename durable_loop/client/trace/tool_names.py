"""The join of a tool's model-facing name and its own name (``files_read`` and
``files.read``, see ``core/tool_names.py``), from what the session recorded: the tool
catalog each run loads (a local activity's marker in history, or a ``list_tools``
activity) and the tool schemas the transcript's replies record (``tool_schemas``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel
from temporalio.api.common.v1 import Payloads
from temporalio.api.history.v1 import HistoryEvent

from durable_loop.client.trace.payloads import decode_payload
from durable_loop.core import names
from durable_loop.core.activity_contracts import ToolCatalogOutput
from durable_loop.core.messages import StoredMessage
from durable_loop.core.reply_meta import LlmReplyMeta, OfferedTool
from durable_loop.core.tools import ToolSpec

LOCAL_ACTIVITY_MARKER = "core_local_activity"
"""The marker the SDK records for a local activity: ``data`` names it, ``result`` holds
what it returned (encoded by the payload codec, like every result)."""


class _MarkerData(BaseModel):
    activity_type: str = ""


def mapped_names(tools: Iterable[ToolSpec | OfferedTool]) -> dict[str, str]:
    """Model-facing name -> own name, for the tools whose name is a mapping."""
    return {t.name: t.original_name for t in tools if t.original_name}


def catalog_load_result(event: HistoryEvent) -> Payloads | None:
    """The result of a ``list_tools`` local activity, when ``event`` is its marker."""
    attrs = event.marker_recorded_event_attributes
    if attrs.marker_name != LOCAL_ACTIVITY_MARKER or "result" not in attrs.details:
        return None
    data = decode_payload(attrs.details["data"], _MarkerData) if "data" in attrs.details else None
    if data is None or data.activity_type != names.LIST_TOOLS:
        return None
    return attrs.details["result"]


def catalog_names(result: Payloads) -> dict[str, str]:
    """The mapped names of a loaded catalog (none when it does not decode)."""
    loaded = decode_payload(result, ToolCatalogOutput)
    return mapped_names(loaded.catalog.tools) if loaded is not None else {}


def stored_names(rows: Sequence[StoredMessage]) -> dict[str, str]:
    """The mapped names of the tool schemas the transcript's replies record."""
    joined: dict[str, str] = {}
    for row in rows:
        if row.message.role == "assistant" and "tool_schemas" in row.meta:
            joined.update(mapped_names(row.meta_as(LlmReplyMeta).tool_schemas or []))
    return joined
