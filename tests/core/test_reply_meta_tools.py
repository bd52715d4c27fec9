"""The offered tools' schemas in a reply's meta: a digest on every reply that offered tools,
the schemas on the first row of each distinct set, old rows parsing without either."""

from __future__ import annotations

from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.reply_meta import (
    LlmReplyMeta,
    OfferedTool,
    offered_tools,
    tools_digest,
)
from durable_loop.core.tools import ToolSpec

READ = ToolSpec(
    name="files_read",
    original_name="files.read",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
ECHO = ToolSpec(name="echo", description="Echo the text.")


def meta_offering(turn: int, specs: list[ToolSpec], earlier: list[StoredMessage]) -> LlmReplyMeta:
    digest, schemas = offered_tools(specs, earlier)
    return LlmReplyMeta(
        turn=turn, tools_sent=[s.name for s in specs], tools_digest=digest, tool_schemas=schemas
    )


def reply_row(seq: int, meta: LlmReplyMeta) -> StoredMessage:
    return StoredMessage(
        seq=seq, message=Message(role="assistant", content="ok"), meta=meta.to_json()
    )


def test_the_first_reply_of_a_tool_set_records_its_schemas_later_ones_its_digest():
    first = meta_offering(1, [READ, ECHO], [])
    assert first.tool_schemas == [OfferedTool.of(READ), OfferedTool.of(ECHO)]
    assert first.tools_digest == tools_digest(first.tool_schemas)
    earlier = [reply_row(1, first)]

    again = meta_offering(2, [READ, ECHO], earlier)
    assert again.tools_digest == first.tools_digest and again.tool_schemas is None
    assert "tool_schemas" not in again.to_json()

    narrower = meta_offering(3, [ECHO], earlier)
    assert narrower.tools_digest != first.tools_digest
    assert narrower.tool_schemas == [OfferedTool.of(ECHO)]


def test_a_changed_description_is_another_set():
    changed = READ.model_copy(update={"description": "Read a file, whole."})
    assert tools_digest([OfferedTool.of(READ)]) != tools_digest([OfferedTool.of(changed)])


def test_no_tools_offered_leaves_both_keys_out():
    meta = meta_offering(1, [], [])
    assert meta.to_json()["tools_sent"] == []
    assert "tools_digest" not in meta.to_json() and "tool_schemas" not in meta.to_json()


def test_stored_schemas_keep_the_original_name_only_when_mapped():
    stored = meta_offering(1, [READ, ECHO], []).to_json()
    schemas = stored["tool_schemas"]
    assert isinstance(schemas, list)
    assert schemas[0] == {
        "name": "files_read",
        "original_name": "files.read",
        "description": "Read a file.",
        "parameters": READ.parameters,
    }
    assert schemas[1] == {
        "name": "echo",
        "description": "Echo the text.",
        "parameters": {"type": "object", "properties": {}},
    }
    assert LlmReplyMeta.model_validate(stored).tool_schemas == [
        OfferedTool.of(READ),
        OfferedTool.of(ECHO),
    ]


def test_a_row_written_before_schemas_were_recorded_parses_without_them():
    old = {"turn": 1, "model": "m", "tools_sent": ["files_read"], "attempt": 1}
    meta = LlmReplyMeta.model_validate(old)
    assert meta.tools_digest is None and meta.tool_schemas is None
    assert not {"tools_digest", "tool_schemas"} & set(meta.to_json())
