"""The chat template inside a GGUF file, and the optional tool fixes for Qwen2.5.

Two lines of the stock Qwen2.5-Coder template teach the model a call shape it then copies:

* earlier tool calls are rendered with ``arguments | tojson``. OpenAI clients send
  ``arguments`` as a JSON *string*, so the prompt shows them double-encoded
  (``"arguments": "{\\"a\\": 2}"``), which a small model imitates or misreads. The fix
  writes string arguments as they are and keeps ``tojson`` for objects;
* the tool instructions show the call example in doubled braces
  (``{{"name": <function-name>, ...}}``, a format-string escape left in the template), and
  the model writes its calls that way, which llama.cpp's own parser does not read (measured
  on xllamacpp 2026.10; docs/evals.md). The fix shows it in single braces.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import DurableLoopError

TEMPLATE_KEY = "tokenizer.chat_template"
STOCK_ARGUMENTS_LINE = "{{- tool_call.arguments | tojson }}"
STOCK_CALL_EXAMPLE = '{{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}}'
FIXED_CALL_EXAMPLE = '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}'
FIXED_ARGUMENTS_LINE = (
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}"
    "{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}"
)

# GGUF value types: fixed-size scalars by struct format; 8 = string, 9 = array.
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9


class GgufError(DurableLoopError, ValueError):
    """A model file whose GGUF header cannot be read (``GGUF_INVALID``)."""

    def __init__(self, message: str) -> None:
        super().__init__(CliCode.GGUF_INVALID, message)


def _read(stream: BinaryIO, fmt: str) -> int:
    size = struct.calcsize("<" + fmt)
    data = stream.read(size)
    if len(data) != size:
        raise GgufError("truncated GGUF header")
    value: int = struct.unpack("<" + fmt, data)[0]
    return value


def _read_string(stream: BinaryIO) -> bytes:
    length = _read(stream, "Q")
    data = stream.read(length)
    if len(data) != length:
        raise GgufError("truncated GGUF string")
    return data


def _skip_value(stream: BinaryIO, kind: int) -> None:
    if kind in _SCALARS:
        stream.seek(struct.calcsize("<" + _SCALARS[kind]), 1)
    elif kind == _STRING:
        stream.seek(_read(stream, "Q"), 1)
    elif kind == _ARRAY:
        item_kind = _read(stream, "I")
        count = _read(stream, "Q")
        if item_kind in _SCALARS:
            stream.seek(count * struct.calcsize("<" + _SCALARS[item_kind]), 1)
        else:
            for _ in range(count):
                _skip_value(stream, item_kind)
    else:
        raise GgufError(f"unknown GGUF value type {kind}")


def read_chat_template(path: Path) -> str | None:
    """The model's own chat template from the GGUF metadata, or None if it has none."""
    with path.open("rb") as stream:
        if stream.read(4) != b"GGUF":
            raise GgufError(f"{path} is not a GGUF file")
        version = _read(stream, "I")
        if version < 2:
            raise GgufError(f"GGUF version {version} is not supported")
        _read(stream, "Q")  # tensor count
        kv_count = _read(stream, "Q")
        for _ in range(kv_count):
            key = _read_string(stream).decode("utf-8", "replace")
            kind = _read(stream, "I")
            if key == TEMPLATE_KEY and kind == _STRING:
                return _read_string(stream).decode("utf-8")
            _skip_value(stream, kind)
    return None


def fix_tool_call_arguments(template: str) -> str | None:
    """The template with string arguments written as-is and the call example in single
    braces; None if the stock arguments line is absent (not a Qwen2.5 template)."""
    if STOCK_ARGUMENTS_LINE not in template:
        return None
    return template.replace(STOCK_ARGUMENTS_LINE, FIXED_ARGUMENTS_LINE).replace(
        STOCK_CALL_EXAMPLE, FIXED_CALL_EXAMPLE
    )
