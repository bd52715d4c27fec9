"""``retry_after_tool_error``: send a model that answered right after a failed call back.

Small models read an error and declare success anyway, so with the setting on the loop
quotes the error and asks for a corrected call (tool_choice "required"). Two failures are
not sent back that way:

* A failure no corrected call can fix (``FINAL_FAILURE_CODES``: the request has no
  result, a person rejected the call, its approval expired): the model's reply, which
  should tell the person so, is the answer (behind the ``error-retry-skips-final-failures``
  patch, asked only when such a failure is the last one).
* A call to a tool that was never offered: the model is told which tools exist and that
  it may answer directly. If the person's message names that tool, they asked for a tool
  action and the retry still requires a call; if the model invented it (``say_hello``
  for a greeting) the request may need no tool at all, and a required call would make
  the model run a real one (a ``note_add`` of the greeting, seen on the local 1.5B), so
  the model keeps its usual tool choice. The loop issues the same commands either way,
  so this needs no patch.

Deterministic workflow code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.config import DEFAULT_UNKNOWN_TOOL_RETRY_TEXT, RuntimeConfig
    from durable_loop.core.errors import FINAL_FAILURE_CODES, ErrorCode

FINAL_FAILURES_PATCH_ID = "error-retry-skips-final-failures"


@dataclass(frozen=True)
class Failure:
    tool: str
    codes: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class RetryRequest:
    prompt: str
    require_tool_call: bool


class ErrorRetry:
    """The last failed call of a message and how many retries it has spent."""

    def __init__(self, config: RuntimeConfig, offered: list[str]) -> None:
        self.limit = config.retry_after_tool_error
        self.template = config.retry_after_tool_error_text
        self.offered = offered
        self.used = 0
        self.last: Failure | None = None
        self.request_text = ""
        """The person's message (empty for a message resumed after approvals)."""

    def note(self, tool: str, codes: list[str], failure: str | None) -> None:
        """Called for every recorded call: a success clears the last failure."""
        self.last = None if failure is None else Failure(tool, tuple(codes), failure)

    def request(self) -> RetryRequest | None:
        """The retry to send now, or None when the reply should stand."""
        last = self.last
        if last is None or self.used >= self.limit or not self.offered:
            return None
        if FINAL_FAILURE_CODES.intersection(last.codes) and workflow.patched(
            FINAL_FAILURES_PATCH_ID
        ):
            return None
        self.used += 1
        if ErrorCode.TOOL_NOT_FOUND in last.codes and last.tool not in self.offered:
            prompt = DEFAULT_UNKNOWN_TOOL_RETRY_TEXT.format(
                name=last.tool, tools=", ".join(self.offered)
            )
            self.last = None  # a direct answer after this is the answer
            return RetryRequest(prompt=prompt, require_tool_call=self._named(last.tool))
        prompt = self.template.format(name=last.tool, error=last.text)
        return RetryRequest(prompt=prompt, require_tool_call=True)

    def _named(self, tool: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", self.request_text) is not None
