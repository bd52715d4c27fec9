"""Argument repairs: one focused LLM request that fixes a refused call's arguments.

Two named recoveries (catalog workarounds, off by default):

* ``shorten_oversized_arguments``: a call refused with ``ARGUMENTS_TOO_LARGE``. The
  request carries only the longest string value, the number of characters it may have,
  and the instruction to shorten it; the reply replaces that value.
* ``repair_invalid_arguments``: a call that failed with ``INVALID_ARGS`` or
  ``INVALID_JSON``. The request carries the tool's JSON schema, the arguments and the
  error, and asks for nothing but a JSON object; the reply replaces the arguments.

Neither request offers tools. The repaired call is stored as a synthetic assistant
message (a new call id, ``<id>-repair``) and then checked and run like any call. Pure.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from durable_loop.core.activity_contracts import ToolCallSummary
from durable_loop.core.canonical_json import canonical_dumps, largest_string, strict_loads
from durable_loop.core.contracts import is_none
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message, Usage

RepairKind = Literal["shorten_oversized_arguments", "repair_invalid_arguments"]
REPAIRED_CODES: dict[RepairKind, frozenset[str]] = {
    "shorten_oversized_arguments": frozenset({ErrorCode.ARGUMENTS_TOO_LARGE}),
    "repair_invalid_arguments": frozenset({ErrorCode.INVALID_ARGS, ErrorCode.INVALID_JSON}),
}
SHORTEN_SYSTEM = (
    "You summarise text. Reply with the summary only: no preamble, no quotes, no explanation."
)
SHORTEN_USER = (
    "Summarise the text below in at most {max_chars} characters, in its own language. Do "
    "not copy it: write a shorter text that keeps what matters.\n\n{value}"
)
REPAIR_SYSTEM = (
    "You fix the arguments of a function call. Reply with one JSON object only: no "
    "explanation, no code fence, no function name."
)
REPAIR_USER = (
    "Function: {name}\nJSON schema of its arguments:\n{schema}\n\nThe arguments sent:\n"
    "{arguments}\n\nThey were refused: {error}\n\nOutput only the corrected arguments as a "
    "JSON object matching the schema."
)
SHORTEN_MARGIN = 0.9
"""Ask for a little less than the limit allows: models overshoot a character count."""
SHORTEN_TOKENS_PER_CHAR = 0.5
SHORTEN_TOKENS_SLACK = 16
"""The shortening reply's token cap: a text within the budget takes at most about one
token per two characters, so a cap at that never cuts a reply that fits, while a model
that copies the text instead stops near the budget, not at the session's ``max_tokens``
(a 1.5B model on CPU copied 4,600 characters in 10 minutes; docs/evals.md)."""
FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.DOTALL)


class RepairCallInput(BaseModel):
    """Repair call ``call_index`` of the assistant message at ``assistant_seq`` and store
    the repaired call as a synthetic assistant message at ``repair_seq``."""

    session_id: str
    endpoint: LlmEndpoint
    kind: RepairKind
    assistant_seq: int
    call_index: int
    repair_seq: int
    turn: int
    error: str = Field(description="The refusal the model would have read")
    max_args_bytes: int = Field(description="The arguments' size limit")
    tool_schema: dict[str, JsonValue] = Field(default_factory=dict)
    offered: list[str] | None = Field(
        default=None,
        exclude_if=is_none,
        description="The tools the model may see, when the session asks for the repaired "
        "call's request_left (finalize_when_done, continue_after_repeat); None: not asked",
    )


class RepairCallOutput(BaseModel):
    """``tool_calls`` holds the repaired call (empty when the reply gave no usable fix)."""

    assistant_seq: int
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    usage: Usage = Usage()
    reason: str = Field(default="", description="Why no call came out of the repair")
    request_left: list[str] | None = Field(
        default=None,
        exclude_if=is_none,
        description="What the person's request still asks for after the repaired call and "
        "the message's calls before it, as LlmTurnOutput.request_left; None: not asked",
    )


def _unfenced(text: str) -> str:
    text = text.strip()
    match = FENCE.match(text)
    return match.group(1).strip() if match else text


def shorten_request(arguments: str, max_args_bytes: int) -> tuple[list[Message], str, int]:
    """The messages, the JSON pointer of the value to shorten and its character budget.

    Raises ValueError when the arguments hold no string to shorten or when shortening it
    cannot bring them under the limit."""
    largest = largest_string(arguments)
    if largest is None:
        raise ValueError("the arguments hold no string value to shorten")
    pointer, length = largest
    over = len(arguments.encode("utf-8")) - max_args_bytes
    budget = int((length - over) * SHORTEN_MARGIN)
    if budget <= 0:
        raise ValueError(f"the longest value ({length} chars) is shorter than the excess")
    value = _at(strict_loads(arguments), pointer)
    assert isinstance(value, str)
    user = SHORTEN_USER.format(max_chars=budget, value=value)
    return [Message.system(SHORTEN_SYSTEM), Message.user(user)], pointer, budget


def shorten_max_tokens(budget: int, session_max: int | None) -> int:
    """The ``max_tokens`` of a shortening request for a ``budget`` of characters."""
    cap = int(budget * SHORTEN_TOKENS_PER_CHAR) + SHORTEN_TOKENS_SLACK
    return min(cap, session_max) if session_max else cap


def repair_request(
    name: str, schema: dict[str, JsonValue], arguments: str, error: str
) -> list[Message]:
    user = REPAIR_USER.format(
        name=name, schema=canonical_dumps(schema), arguments=arguments, error=error
    )
    return [Message.system(REPAIR_SYSTEM), Message.user(user)]


def _steps(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _at(document: JsonValue, pointer: str) -> JsonValue:
    node = document
    for step in _steps(pointer):
        node = node[int(step)] if isinstance(node, list) else node[step]  # type: ignore[index]
    return node


def with_value(arguments: str, pointer: str, value: str) -> str:
    """``arguments`` (a JSON object) with the string at ``pointer`` replaced."""
    document = strict_loads(arguments)
    steps = _steps(pointer)
    parent = _at(document, "".join(f"/{s}" for s in steps[:-1])) if steps[:-1] else document
    last = steps[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    elif isinstance(parent, dict):
        parent[last] = value
    return canonical_dumps(document)


def shortened_value(reply: str | None) -> str | None:
    text = _unfenced(reply or "")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
    return text or None


def repaired_arguments(reply: str | None) -> str | None:
    """The JSON object a repair reply holds (a fence or a leading/trailing sentence is
    tolerated), canonical; None when there is none."""
    text = _unfenced(reply or "")
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return canonical_dumps(value) if isinstance(value, dict) else None


def repair_kind(
    codes: list[str], enabled: set[RepairKind], used: set[RepairKind]
) -> RepairKind | None:
    """Which enabled, not yet used recovery repairs a call that failed with ``codes``."""
    for kind, repaired in REPAIRED_CODES.items():
        if kind in enabled and kind not in used and repaired & set(codes):
            return kind
    return None
