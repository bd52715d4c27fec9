"""Outbound message transforms, each on its own (they act on wire messages)."""

from __future__ import annotations

from durable_loop.core.transforms.outbound import (
    SKIP_SIGNATURE,
    assistant_tool_calls_content_null_if_blank,
    assistant_tool_calls_reasoning_content_empty_if_missing,
    assistant_tool_calls_signature_skip_validator_if_missing,
)

CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}


def test_content_null_if_blank():
    wire = {"role": "assistant", "content": "  ", "tool_calls": [CALL]}
    assert assistant_tool_calls_content_null_if_blank(wire)["content"] is None
    assert wire["content"] == "  "  # pure: the input is untouched
    kept = {"role": "assistant", "content": "thinking", "tool_calls": [CALL]}
    assert assistant_tool_calls_content_null_if_blank(kept) == kept
    plain = {"role": "assistant", "content": ""}
    assert assistant_tool_calls_content_null_if_blank(plain) == plain


def test_reasoning_content_empty_if_missing():
    wire = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    assert assistant_tool_calls_reasoning_content_empty_if_missing(wire)["reasoning_content"] == ""
    present = {**wire, "reasoning_content": "because"}
    assert assistant_tool_calls_reasoning_content_empty_if_missing(present) == present
    user = {"role": "user", "content": "hi"}
    assert assistant_tool_calls_reasoning_content_empty_if_missing(user) == user


def test_signature_skip_validator_openai_shape():
    wire = {"role": "assistant", "content": "", "tool_calls": [CALL, {**CALL, "id": "c2"}]}
    out = assistant_tool_calls_signature_skip_validator_if_missing(wire)
    assert out["tool_calls"][0]["extra_content"] == {
        "google": {"thought_signature": SKIP_SIGNATURE}
    }
    assert "extra_content" not in out["tool_calls"][1]
    assert "extra_content" not in wire["tool_calls"][0]
    signed_call = {**CALL, "extra_content": {"google": {"thought_signature": "REAL"}}}
    signed = {**wire, "tool_calls": [signed_call]}
    assert assistant_tool_calls_signature_skip_validator_if_missing(signed) == signed


def test_signature_skip_validator_gemini_shape():
    wire = {
        "role": "model",
        "parts": [{"text": "checking"}, {"functionCall": {"name": "add", "args": {}}}],
    }
    out = assistant_tool_calls_signature_skip_validator_if_missing(wire)
    assert out["parts"][1]["thoughtSignature"] == SKIP_SIGNATURE
    assert "thoughtSignature" not in out["parts"][0]
    signed = {"role": "model", "parts": [{"functionCall": {"name": "a"}, "thoughtSignature": "X"}]}
    assert assistant_tool_calls_signature_skip_validator_if_missing(signed) == signed
    user = {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}
    assert assistant_tool_calls_signature_skip_validator_if_missing(user) == user
