"""The tool result envelope and the JSON text the model reads."""

from __future__ import annotations

import json

from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode


def test_success_content_is_canonical_json():
    content = Envelope.success({"b": 1, "a": "é"}, warnings=["partial"]).to_content()
    assert content == '{"data":{"a":"é","b":1},"errors":[],"ok":true,"warnings":["partial"]}'


def test_failure_carries_code_and_message():
    envelope = Envelope.failure(ErrorCode.INVALID_ARGS, "a: not an integer", data={"a": "x"})
    assert envelope.error_codes == ["INVALID_ARGS"]
    assert json.loads(envelope.to_content()) == {
        "ok": False,
        "data": {"a": "x"},
        "warnings": [],
        "errors": [{"code": "INVALID_ARGS", "message": "a: not an integer"}],
    }


def test_deduplicated_flag_appears_only_when_set():
    assert "deduplicated" not in Envelope.success(1).to_content()
    assert "reused" not in Envelope.success(1).to_content()
    reused = Envelope.success(1).model_copy(update={"deduplicated": True})
    assert json.loads(reused.to_content())["deduplicated"] is True
