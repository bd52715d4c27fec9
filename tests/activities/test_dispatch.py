"""dispatch: one tool call from raw arguments to an envelope, without Temporal."""

from __future__ import annotations

import asyncio
import math

import pytest

from durable_loop.activities.dispatch import dispatch
from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry

CTX = ToolContext(
    session_id="s", workflow_id="session-s", call_id="c1", turn=1, attempt=1, idempotency_key="k"
)
calls: list[dict] = []
registry = ToolRegistry()


@registry.tool()
def add(a: int, b: int = 1) -> int:
    """Add."""
    calls.append({"a": a, "b": b})
    return a + b


@registry.tool()
async def sleepy(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "awake"


stubborn_release = asyncio.Event()


@registry.tool()
async def stubborn() -> str:
    """Ignores cancellation (a client library stuck in a call) until the test releases it."""
    while not stubborn_release.is_set():
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            continue
    return "sent"


@registry.tool()
def refuse(reason: str) -> str:
    raise ToolFailure("LOCKED", f"locked: {reason}", data={"reason": reason})


@registry.tool()
def crash() -> str:
    raise RuntimeError("boom")


@registry.tool()
def weird() -> object:
    return {"value": math.nan}


@registry.tool()
def opaque() -> object:
    return object()


@registry.tool()
def big(size: int) -> str:
    return "x" * size


@registry.tool()
def whoami(ctx: ToolContext) -> dict:
    return {"call_id": ctx.call_id, "key": ctx.idempotency_key}


async def run(name: str, raw: str, *, timeout_s: float = 5, max_bytes: int = 10_000, last=True):
    done = await dispatch(
        registry.get(name),
        name,
        raw,
        CTX,
        timeout_s=timeout_s,
        max_output_bytes=max_bytes,
        last_attempt=last,
    )
    return done.envelope, done.size


@pytest.fixture(autouse=True)
def _clear_calls():
    calls.clear()


async def test_success_returns_data_and_size():
    envelope, size = await run("add", '{"a": 2}')
    assert envelope.ok and envelope.data == 3 and size == 1
    assert calls == [{"a": 2, "b": 1}]


async def test_blank_arguments_mean_no_arguments():
    envelope, _ = await run("whoami", "  ")
    assert envelope.data == {"call_id": "c1", "key": "k"}


@pytest.mark.parametrize("raw", ['{"a": ', "[1]", '"x"'])
async def test_invalid_json_is_refused_before_the_tool_runs(raw):
    envelope, _ = await run("add", raw)
    assert envelope.error_codes == ["INVALID_JSON"] and calls == []


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"a": "2"}', "a: '2' is not of type 'integer'"),
        ('{"b": 2}', "(root): 'a' is a required property"),
        ('{"a": 1.5}', "a: 1.5 is not of type 'integer'"),
    ],
)
async def test_schema_violations_are_invalid_args(raw, fragment):
    envelope, _ = await run("add", raw)
    assert envelope.error_codes == ["INVALID_ARGS"] and fragment in envelope.errors[0].message
    assert calls == []


async def test_unknown_tool():
    done = await dispatch(
        None, "ghost", "{}", CTX, timeout_s=1, max_output_bytes=10, last_attempt=True
    )
    assert done.envelope.error_codes == ["TOOL_NOT_FOUND"] and not done.ran


@pytest.mark.parametrize(
    ("name", "raw", "ran"),
    [
        ("add", '{"a": 2}', True),
        ("add", "", False),  # blank: {} misses the required "a"
        ("add", '{"a": ', False),
        ("add", '{"a": "2"}', False),
        ("sleepy", '{"seconds": 5}', True),  # timed out, but its code ran
        ("refuse", '{"reason": "busy"}', True),
    ],
)
async def test_ran_means_the_tools_code_ran(name, raw, ran):
    done = await dispatch(
        registry.get(name), name, raw, CTX, timeout_s=0.05, max_output_bytes=100, last_attempt=True
    )
    assert done.ran is ran


async def test_timeout_is_a_coded_result():
    envelope, _ = await run("sleepy", '{"seconds": 5}', timeout_s=0.05)
    assert envelope.error_codes == ["TOOL_TIMEOUT"] and "0.05s" in envelope.errors[0].message


async def test_tool_failure_keeps_code_message_and_data():
    envelope, _ = await run("refuse", '{"reason": "busy"}')
    assert envelope.error_codes == ["LOCKED"]
    assert envelope.errors[0].message == "locked: busy" and envelope.data == {"reason": "busy"}


async def test_unexpected_exception_is_raised_while_attempts_remain():
    with pytest.raises(RuntimeError, match="boom"):
        await run("crash", "{}", last=False)


async def test_unexpected_exception_becomes_tool_error_on_the_last_attempt():
    envelope, _ = await run("crash", "{}", last=True)
    assert envelope.error_codes == ["TOOL_ERROR"]
    assert envelope.errors[0].message == "RuntimeError: boom"


@pytest.mark.parametrize("name", ["weird", "opaque"])
async def test_non_json_return_values_are_tool_errors(name):
    envelope, _ = await run(name, "{}")
    assert envelope.error_codes == ["TOOL_ERROR"]
    assert "non-JSON value" in envelope.errors[0].message


async def test_output_over_the_limit_is_replaced():
    envelope, size = await run("big", '{"size": 200}', max_bytes=100)
    assert envelope.error_codes == ["TOOL_OUTPUT_TOO_LARGE"] and envelope.data is None
    assert size == 202 and "the limit is 100" in envelope.errors[0].message
    envelope, size = await run("big", '{"size": 98}', max_bytes=100)
    assert envelope.ok and size == 100


def dispatching(name: str, raw: str, timeout_s: float) -> asyncio.Task:
    tool = registry.get(name)
    return asyncio.ensure_future(
        dispatch(tool, name, raw, CTX, timeout_s=timeout_s, max_output_bytes=100, last_attempt=True)
    )


async def test_a_cancel_after_the_timeout_waits_for_a_body_that_ignores_both():
    """The tool's timeout has cancelled the body, which runs on; the activity's cancel (its
    server-side timeout, say) must not leave the body behind with nobody to take its result
    (a once call's late body would leave no audit row)."""
    stubborn_release.clear()
    task = dispatching("stubborn", "{}", timeout_s=0.05)
    try:
        await asyncio.sleep(0.2)
        task.cancel()
        await asyncio.sleep(0.2)
        waited = not task.done()
    finally:
        stubborn_release.set()
    done = await asyncio.wait_for(task, 5)
    assert waited and done.envelope.ok and done.envelope.data == "sent"


async def test_a_cancelled_call_of_a_body_that_stops_ends_cancelled():
    task = dispatching("sleepy", '{"seconds": 5}', timeout_s=5)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1)
