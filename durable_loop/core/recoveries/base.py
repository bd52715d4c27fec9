"""What a recovery is: a named, opt-in answer to one way a model goes wrong.

Each recovery is one :class:`Recovery` record: its name (the key under
``RuntimeConfig.recoveries``), its settings model (with its prompt text), the patch that
introduced it, and the judge the message loop asks at the recovery's stage. A judge is a
pure function of the settings, what it is shown (:class:`Event`) and what the loop knows
about the message (:class:`MessageFacts`); it returns the :class:`Action` to take or None.
``MessageFacts.patched`` is ``workflow.patched`` in the loop, so a judge asks its patch
exactly where the loop used to, and stays testable without a workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue

from durable_loop.core.errors import CodedError
from durable_loop.core.reply_check import results_digest
from durable_loop.core.tools import tool_purpose

Stage = Literal[
    "reply", "failure", "answer", "repeat", "results", "typed", "refused_call", "call", "message"
]
"""Where a recovery fires. ``reply``: on every final reply, before the checks.
``failure``: on a final reply the answer check refused (REPLY_NOT_AN_ANSWER).
``answer``: on a plain-text final reply that passed the checks. ``repeat``: after the
repeated-call guard answered a repeat. ``results``: after a turn's calls were run and
recorded (none repeated, refused or held). The other four are carried out by their own
code (no judge): ``typed`` (workflows/typed_answers), ``refused_call``
(workflows/argument_repair), ``call`` (core/guards), ``message`` (before a person's
message is first sent: workflows/conversation_gate)."""


class RecoverySettings(BaseModel):
    """Base of every recovery's settings model."""

    model_config = ConfigDict(frozen=True, extra="forbid")


S = TypeVar("S", bound=RecoverySettings)


@dataclass(frozen=True)
class LastFailure:
    tool: str
    codes: tuple[str, ...]
    text: str


REQUEST_CHARS = 500


@dataclass
class MessageFacts:
    """What the loop knows about the running message, kept current by the loop."""

    registered: frozenset[str]
    offered: list[str]
    """The tools this message may offer at all (empty when tool use is off)."""
    patched: Callable[[str], bool]
    request_text: str = ""
    """The person's message (empty for a message resumed after approvals)."""
    routed_tool: str | None = None
    """The tool the conversation gate routed the message to (None without a gate)."""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    """Tool -> its description; what it does (``core/tools.tool_purpose``) is shown beside
    its results, worked out only when a finalization quotes them."""
    results: list[tuple[str, str]] = field(default_factory=list)
    called: set[str] = field(default_factory=set)
    last_failure: LastFailure | None = None
    uses: dict[str, int] = field(default_factory=dict)
    """How often each recovery fired in this message."""
    marks: dict[str, set[str]] = field(default_factory=dict)
    """Per recovery, names it has already acted on (e.g. the tools it asked for)."""

    def used(self, name: str) -> int:
        return self.uses.get(name, 0)

    def quoted_request(self) -> str:
        """The person's message as a request to the model quotes it (cut to
        ``REQUEST_CHARS``)."""
        return self.request_text[:REQUEST_CHARS]

    def results_digest(self, leave_out: str | None = None) -> str:
        """The recorded results as a finalization request quotes them (``leave_out``: a
        tool whose results are not shown)."""
        kept = [(tool, text) for tool, text in self.results if tool != leave_out]
        purposes = {
            tool: tool_purpose(self.descriptions[tool])
            for tool in {tool for tool, _ in kept}
            if tool in self.descriptions
        }
        return results_digest(kept, purposes=purposes)

    def note_result(self, tool: str, text: str) -> None:
        self.results.append((tool, text))
        self.called.add(tool)

    def note_outcome(self, tool: str, codes: list[str], failure: str | None) -> None:
        """Every recorded call: a success clears the last failure."""
        self.last_failure = None if failure is None else LastFailure(tool, tuple(codes), failure)


@dataclass(frozen=True)
class Event:
    """What a judge is shown: the final reply, and the failure the answer check found."""

    text: str | None = None
    tool_calls_made: int = 0
    failure: CodedError | None = None
    request_left: tuple[str, ...] | None = None
    """After a turn's calls: what the person's request still asks for
    (``LlmTurnOutput.request_left``); None when not known."""
    calls_ok: bool = False
    """After a turn's calls: every one ran and succeeded."""
    made_up_repeat: bool = False
    """After a repeat: a call the repeated-call guard answered was of a tool that does not
    exist (``CallDecision.made_up``)."""


@dataclass(frozen=True)
class Action:
    """What the loop does: append ``prompt`` as a synthetic user message, set the tools
    off/on (None: leave as is), ask for a tool call on the next request, or fail."""

    prompt: str = ""
    tools_off: bool | None = None
    require_tool_call: bool = False
    error: CodedError | None = None


@dataclass(frozen=True)
class Legacy:
    """The flat ``RuntimeConfig`` keys this recovery had before ``recoveries`` (still read)."""

    switch: str
    """The key that turned it on (True/False, or a count when ``counts``)."""
    counts: bool = False
    """The switch held a count (0: off) that is now the ``attempts`` setting."""
    fields: dict[str, str] = field(default_factory=dict)
    """Old key -> settings field."""
    omit_default: bool = False
    """Old dumps left the switch out at its default (``exclude_if``)."""
    dumped_when_off: dict[str, JsonValue] = field(default_factory=dict)
    """Settings values an old config dumped while the recovery was off, where a default
    changed since (a text reworded): an off recovery digests as it always did."""


@dataclass(frozen=True)
class Recovery(Generic[S]):
    name: str
    settings: type[S]
    stage: Stage
    fixes: str
    effect: str
    """The measured effect, for the README's table."""
    judge: Callable[[S, Event, MessageFacts], Action | None] | None = None
    patch_id: str | None = None
    reported: bool = True
    """Named in ``RunResult.recoveries`` when it fires."""
    on_by_default: bool = False
    legacy: Legacy | None = None
    reads_request_left: bool = False
    """Its judge reads ``Event.request_left``: a session using it asks the activities
    for ``LlmTurnOutput.request_left``."""
