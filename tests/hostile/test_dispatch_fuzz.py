"""Hostile tool-call payloads through parse / validate / dispatch: every outcome is an
envelope with a known code, and every envelope can be stored and sent through Temporal."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue
from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.activities.dispatch import (
    bound_output,
    dispatch,
    parse_arguments,
    to_envelope,
    validate_arguments,
)
from durable_loop.activities.tools import summarize_result
from durable_loop.core.activity_contracts import ToolRunInput
from durable_loop.core.canonical_json import arguments_fingerprint
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, StoredMessage
from durable_loop.core.registry import ToolContext, ToolRegistry
from durable_loop.store.transcript import message_json
from tests.hostile.budget import fuzz, hit
from tests.hostile.strategies import JSON_VALUES, RAW_ARGUMENTS

KNOWN_CODES = {str(code) for code in ErrorCode}
CTX = ToolContext(
    session_id="s", workflow_id="session-s", call_id="c", turn=1, attempt=1, idempotency_key="k"
)
LOOP = asyncio.new_event_loop()
registry = ToolRegistry()
returned: list[Any] = []


@registry.tool()
def typed(a: int, b: str, flags: list[bool] | None = None) -> dict[str, Any]:
    """Strictly typed arguments."""
    return {"a": a, "b": b, "flags": flags}


@registry.tool()
def anything(value: JsonValue = None) -> JsonValue:
    """Echo any JSON value back."""
    return value


@registry.tool()
def hostile_output(ctx: ToolContext) -> object:
    """Return whatever the test put in ``returned`` (NaN, sets, huge text, surrogates)."""
    return returned[-1]


def run(name: str, raw: str, max_bytes: int = 64_000) -> tuple[Envelope, int]:
    done = LOOP.run_until_complete(
        dispatch(
            registry.get(name),
            name,
            raw,
            CTX,
            timeout_s=5,
            max_output_bytes=max_bytes,
            last_attempt=True,
        )
    )
    return done.envelope, done.size


def assert_storable(envelope: Envelope, size: int) -> None:
    """The envelope is coded, storable in the transcript and passable through Temporal."""
    assert size >= 0
    if not envelope.ok:
        assert envelope.errors and {e.code for e in envelope.errors} <= KNOWN_CODES
    message = Message.tool_result("c", "t", envelope)
    again = Message.model_validate_json(message_json(message))
    assert again.envelope is not None and again.envelope.ok == envelope.ok
    json.loads(envelope.to_content())
    inp = ToolRunInput(
        session_id="s",
        workflow_id="w",
        turn=1,
        assistant_seq=1,
        call_index=0,
        call_id="c",
        name="t",
        result_seq=2,
        max_output_bytes=1,
        timeout_s=1,
        max_attempts=1,
    )
    out = summarize_result(StoredMessage(seq=2, message=again), inp, cached=False)
    pydantic_data_converter.payload_converter.to_payloads([out])


HAZARDS = [
    '{"\\ud800": "\\udfff"}',  # lone surrogates as JSON escapes
    '{"value": NaN}',
    '{"value": -Infinity}',
    '{"value": 1e400}',
    '{"value": ' + "9" * 5000 + "}",  # past Python's int-from-text digit limit
    '{"value":' + "[" * 300 + "]" * 300 + "}",  # deeper than pydantic validates
    "[" * 100_000,
    '{"value": 1, "value": 2}',
    "\ufeff{}",
]


@fuzz(1000)
@given(raw=RAW_ARGUMENTS, name=st.sampled_from(["typed", "anything", "missing"]))
def test_any_arguments_become_a_coded_envelope(raw: str, name: str) -> None:
    check_arguments(raw, name)


@pytest.mark.parametrize("raw", HAZARDS)
def test_known_hazards_become_coded_envelopes(raw: str) -> None:
    """Regression cases found by the fuzzer (surrogates, NaN, 1e400, deep nesting)."""
    for name in ("typed", "anything"):
        check_arguments(raw, name)
    envelope, _ = run("anything", raw)
    if raw.startswith(('{"value": N', '{"value": -I', '{"value": 1e', '{"value":[')):
        assert envelope.error_codes == [ErrorCode.INVALID_JSON], envelope


def check_arguments(raw: str, name: str) -> None:
    hit("dispatch: raw arguments")
    envelope, size = run(name, raw)
    assert_storable(envelope, size)
    valid, digest = arguments_fingerprint(raw)
    assert len(digest) == 64
    if name == "missing":
        assert envelope.error_codes == [ErrorCode.TOOL_NOT_FOUND]
    elif not valid:
        assert envelope.error_codes == [ErrorCode.INVALID_JSON]


@fuzz(500)
@given(raw=RAW_ARGUMENTS)
def test_parse_and_validate_never_raise(raw: str) -> None:
    hit("dispatch: parse + validate")
    parsed = parse_arguments(raw)
    if isinstance(parsed, Envelope):
        assert parsed.error_codes == [ErrorCode.INVALID_JSON]
        return
    tool = registry.get("typed")
    assert tool is not None
    invalid = validate_arguments(tool, parsed)
    if invalid is not None:
        assert invalid.error_codes == [ErrorCode.INVALID_ARGS]
        assert_storable(invalid, 0)


@fuzz(500)
@given(
    value=st.one_of(
        JSON_VALUES,
        st.sets(st.integers(), max_size=3),
        st.builds(object),
        st.binary(max_size=20),
        st.just(math.nan),
        st.complex_numbers(),
    ),
    max_bytes=st.sampled_from([10, 1_000, 64_000]),
)
def test_any_tool_output_becomes_a_bounded_envelope(value: object, max_bytes: int) -> None:
    hit("dispatch: tool outputs")
    returned.append(value)
    envelope, size = run("hostile_output", "{}", max_bytes)
    returned.clear()
    assert_storable(envelope, size)
    if envelope.ok:
        assert size <= max_bytes
    direct, _ = bound_output(to_envelope(value), max_bytes)
    assert direct.ok == envelope.ok
