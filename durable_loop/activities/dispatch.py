"""Executing one tool call: parse, validate, coerce to the schema's types, run with a
timeout, bound the output.

Every outcome is an :class:`Envelope`. An unexpected exception is re-raised while Temporal
still has attempts left (so the retry policy applies) and becomes TOOL_ERROR on the last.

A cancelled call (its activity cancelled) cancels an async tool at once, unless a person
approved the call (``outlast_cancel``): a started side effect someone allowed is never
abandoned halfway. A sync tool's thread cannot be interrupted at all. In every case a
cancel waits for the body to end, and its result is returned (the activity stores it,
marked as after the cancel), so the record and the model get what actually happened. The
tool's own timeout bounds that wait for a sync tool and for an async body that honours
cancellation; an async body that ignores it is waited for until it returns (a second
cancel, such as worker shutdown, still ends the wait).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from durable_loop.core.canonical_json import (
    canonical_dumps,
    scrub_surrogates,
    strict_loads,
    utf8_len,
)
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import RegisteredTool, ToolContext, ToolFailure
from durable_loop.core.schema_coercion import coerce_to_schema

MAX_VALIDATION_ERRORS = 5
TOOL_THREADS = ThreadPoolExecutor(max_workers=128, thread_name_prefix="durable-loop-tool")
"""Sync tools run here, not in the event loop's default executor (6 threads on 2 CPUs):
8 parallel 1 s sync tools took 2 s there (bench/parallel_tools.py). Threads start lazily."""


def parse_arguments(raw: str) -> dict[str, JsonValue] | Envelope:
    try:
        value = strict_loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as err:
        return Envelope.failure(ErrorCode.INVALID_JSON, f"arguments are not valid JSON: {err}")
    if not isinstance(value, dict):
        return Envelope.failure(ErrorCode.INVALID_JSON, "arguments must be a JSON object")
    return scrub_surrogates(value)


def validate_arguments(tool: RegisteredTool, arguments: dict[str, JsonValue]) -> Envelope | None:
    try:
        validator = Draft202012Validator(tool.spec.parameters)
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except SchemaError as err:
        return Envelope.failure(ErrorCode.TOOL_ERROR, f"tool schema is invalid: {err.message}")
    if not errors:
        return None
    details = []
    for error in errors[:MAX_VALIDATION_ERRORS]:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        details.append(f"{where}: {error.message}")
    return Envelope.failure(ErrorCode.INVALID_ARGS, "; ".join(details))


def to_envelope(result: object) -> Envelope:
    if isinstance(result, Envelope):
        return result
    try:
        data = to_jsonable_python(result)
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as err:
        return Envelope.failure(ErrorCode.TOOL_ERROR, f"tool returned a non-JSON value: {err}")
    return Envelope.success(data)


def bound_output(envelope: Envelope, max_bytes: int) -> tuple[Envelope, int]:
    size = utf8_len(canonical_dumps(envelope.data))
    if size > max_bytes:
        return (
            Envelope.failure(
                ErrorCode.TOOL_OUTPUT_TOO_LARGE,
                f"tool output was {size} bytes; the limit is {max_bytes}. "
                "Ask for less (a narrower path or a smaller range).",
            ),
            size,
        )
    return envelope, size


class Dispatched(NamedTuple):
    envelope: Envelope
    size: int
    """Output size in bytes."""
    ran: bool
    """The tool's code ran; False when a check before it (unknown tool, arguments that are
    not JSON or do not fit the schema) refused the call."""
    in_doubt: bool = False
    """An earlier attempt stopped inside an ``effect="once"`` body and nothing settled it."""


async def dispatch(
    tool: RegisteredTool | None,
    name: str,
    raw_arguments: str,
    ctx: ToolContext,
    *,
    timeout_s: float,
    max_output_bytes: int,
    last_attempt: bool,
    ignore_implicit: bool = False,
    outlast_cancel: bool = False,
) -> Dispatched:
    """Run one call: the envelope, the output size and whether the tool ran."""
    if tool is None:
        return Dispatched(
            Envelope.failure(ErrorCode.TOOL_NOT_FOUND, f"no tool named {name!r}"), 0, False
        )
    parsed = parse_arguments(raw_arguments)
    if isinstance(parsed, Envelope):
        return Dispatched(parsed, 0, False)
    ignored = [k for k in tool.spec.implicit_args if k in parsed] if ignore_implicit else []
    parsed = {k: v for k, v in parsed.items() if k not in ignored}
    invalid = validate_arguments(tool, parsed)
    if invalid is not None:
        return Dispatched(invalid, 0, False)
    coerced = coerce_to_schema(tool.spec.parameters, parsed)
    parsed = coerced if isinstance(coerced, dict) else parsed
    interruptible = tool.is_async and not outlast_cancel
    envelope, size = await _run(
        tool, name, parsed, ctx, timeout_s, max_output_bytes, last_attempt, interruptible
    )
    if ignored:
        note = f"{', '.join(ignored)}: filled in by the runtime; the value you passed was ignored"
        envelope = with_warning(envelope, note)
    return Dispatched(envelope, size, True)


def with_warning(envelope: Envelope, warning: str) -> Envelope:
    return envelope.model_copy(update={"warnings": [*envelope.warnings, warning]})


async def _run(
    tool: RegisteredTool,
    name: str,
    parsed: dict[str, JsonValue],
    ctx: ToolContext,
    timeout_s: float,
    max_output_bytes: int,
    last_attempt: bool,
    interruptible: bool,
) -> tuple[Envelope, int]:
    body = asyncio.ensure_future(tool.call(parsed, ctx, TOOL_THREADS))
    call = asyncio.ensure_future(asyncio.wait_for(body, timeout=timeout_s))
    try:
        result = await _outlasting_cancel(call, body, interruptible=interruptible)
    except TimeoutError:
        return Envelope.failure(ErrorCode.TOOL_TIMEOUT, f"{name} took longer than {timeout_s}s"), 0
    except ToolFailure as failure:
        return Envelope.failure(failure.code, failure.message, failure.data), 0
    except Exception as err:
        if not last_attempt:
            raise
        return Envelope.failure(ErrorCode.TOOL_ERROR, f"{type(err).__name__}: {err}"), 0
    return bound_output(to_envelope(result), max_output_bytes)


async def _outlasting_cancel(
    call: asyncio.Future[object], body: asyncio.Future[object], *, interruptible: bool
) -> object:
    """``call`` (``body`` under its ``wait_for``)'s result; when the caller is cancelled, an
    interruptible body is cancelled, an uninterruptible one (a sync body in its thread) is
    waited for: its ``wait_for`` still bounds it by the tool's timeout.

    The body is cancelled, never ``call``: a cancelled ``wait_for`` stops waiting at once
    when its own timeout has already cancelled the body, and a body that ignores
    cancellation would then run on with nobody left to receive what it returns (a once
    call's late body would leave no audit row). Waiting on ``call`` instead ends when the
    body does, with its result if it returned one."""
    try:
        return await asyncio.shield(call)
    except asyncio.CancelledError:
        if interruptible:
            body.cancel()
        await asyncio.wait({call})
        if call.cancelled():
            raise
        return call.result()
