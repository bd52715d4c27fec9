"""The chat template read from GGUF metadata, and the optional tool-argument fix."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import jinja2
import pytest

from durable_loop.cli.chat_template import (
    FIXED_ARGUMENTS_LINE,
    FIXED_CALL_EXAMPLE,
    STOCK_ARGUMENTS_LINE,
    STOCK_CALL_EXAMPLE,
    GgufError,
    fix_tool_call_arguments,
    read_chat_template,
)
from durable_loop.cli.local_llm import chat_template_for

# The assistant tool-call part of the Qwen2.5 template, as shipped in its GGUF.
QWEN_TOOL_CALLS = (
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    '{{- \'<tool_call>{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}'
    + STOCK_ARGUMENTS_LINE
    + "{{- '}</tool_call>' }}{%- endfor %}"
)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, template: str | None) -> Path:
    """A GGUF v3 header with a scalar, a string array and (optionally) a chat template."""
    kvs = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("qwen2"),
        _string("qwen2.context_length") + struct.pack("<I", 4) + struct.pack("<I", 32768),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<I", 9)
        + struct.pack("<IQ", 8, 3)
        + b"".join(_string(t) for t in ("a", "b", "<|im_end|>")),
        _string("tokenizer.ggml.scores")
        + struct.pack("<I", 9)
        + struct.pack("<IQ", 6, 2)
        + struct.pack("<ff", 0.5, 0.25),
    ]
    if template is not None:
        kvs.append(_string("tokenizer.chat_template") + struct.pack("<I", 8) + _string(template))
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    path.write_bytes(header + b"".join(kvs) + b"\0" * 64)
    return path


def render(template: str, arguments: object) -> str:
    env = jinja2.Environment()
    env.filters["tojson"] = json.dumps
    message = {
        "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": arguments}}]
    }
    return env.from_string(template).render(message=message)


def test_reads_the_template_past_arrays_and_scalars(tmp_path: Path):
    path = write_gguf(tmp_path / "m.gguf", QWEN_TOOL_CALLS)
    assert read_chat_template(path) == QWEN_TOOL_CALLS


def test_no_template_and_not_gguf(tmp_path: Path):
    assert read_chat_template(write_gguf(tmp_path / "m.gguf", None)) is None
    other = tmp_path / "x.bin"
    other.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(GgufError, match="is not a GGUF file"):
        read_chat_template(other)


def test_stock_template_double_encodes_string_arguments():
    rendered = render(QWEN_TOOL_CALLS, '{"a": 2}')
    assert '"arguments": "{\\"a\\": 2}"' in rendered


def test_fixed_template_writes_string_arguments_as_is_and_objects_as_json():
    fixed = fix_tool_call_arguments(QWEN_TOOL_CALLS)
    assert fixed is not None and FIXED_ARGUMENTS_LINE in fixed
    assert '"arguments": {"a": 2}}' in render(fixed, '{"a": 2}')
    assert '"arguments": {"a": 2}}' in render(fixed, {"a": 2})


# The tools preamble of the Qwen2.5-Coder template, as shipped in its GGUF.
QWEN_CODER_PREAMBLE = (
    '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and '
    "arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
    + STOCK_CALL_EXAMPLE
    + '\\n</tool_call><|im_end|>\\n" }}'
)


def test_fixed_template_shows_the_call_example_in_single_braces():
    stock = jinja2.Environment().from_string(QWEN_CODER_PREAMBLE).render()
    assert '{{"name": <function-name>, "arguments": <args-json-object>}}' in stock
    fixed = fix_tool_call_arguments(QWEN_TOOL_CALLS + QWEN_CODER_PREAMBLE)
    assert fixed is not None and FIXED_CALL_EXAMPLE in fixed
    shown = jinja2.Environment().from_string(fixed).render(message={"tool_calls": []})
    assert '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n' in shown


def test_fix_is_none_when_the_stock_line_is_absent():
    assert fix_tool_call_arguments("{{ messages }}") is None


def test_template_override_is_empty_unless_asked(tmp_path: Path):
    path = write_gguf(tmp_path / "m.gguf", QWEN_TOOL_CALLS)
    assert chat_template_for(path, fix_tool_arguments=False) == ""
    assert FIXED_ARGUMENTS_LINE in chat_template_for(path, fix_tool_arguments=True)
    plain = write_gguf(tmp_path / "p.gguf", "{{ messages }}")
    assert chat_template_for(plain, fix_tool_arguments=True) == ""


def test_local_llm_and_the_demo_serve_the_fixed_template_by_default():
    import inspect

    from typer.testing import CliRunner

    from durable_loop.cli.local_llm import local_llm_command, serve_local_model
    from durable_loop.console import app
    from durable_loop.demo.command import demo_command

    for command in (local_llm_command, demo_command):
        assert inspect.signature(command).parameters["fix_template"].default is True
    assert inspect.signature(serve_local_model).parameters["fix_tool_arguments"].default
    for name in ("local-llm", "demo"):
        result = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert "--stock-template" in result.output, name
