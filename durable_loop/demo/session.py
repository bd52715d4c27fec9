"""The demo session: its settings, its messages, a live view of each turn and its checks.

Given a connected :class:`SessionClient` and the worker's store, :func:`run_demo_session`
sends the demo messages to one session, prints every transcript row as it lands (the model's
tool calls, tool results, answers), closes the session and checks the answers. Wiring
(servers, worker, environment) lives in ``durable_loop.demo.command``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from durable_loop.client.sessions import SessionClient
from durable_loop.core import names, presets
from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.contracts import RunResult
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.messages import StoredMessage
from durable_loop.core.reply_meta import LlmReplyMeta
from durable_loop.demo.tools import Notebook
from durable_loop.store import TranscriptStore

Emit = Callable[[str], None]

SYSTEM_PROMPT: str | None = None
"""No system prompt of our own: the packaged 1.5B model follows tool results best under the
default its chat template supplies. Measured with temperature 0: each added instruction we
tried made it write calls as text, echo stray braces, or stop after the first result."""

DEMO_OVERRIDES: presets.Update = {
    # One call per reply, run in order: dependent steps (compute, then save) stay visible
    # turn by turn, and small models emit one call per reply anyway.
    "parallel_tool_calls": False,
    "max_tool_calls_per_turn": 1,
    # The generic guards that end a small model's loops: a repeated identical call gets its
    # recorded result and tools are left out of the next request; an empty reply after tool
    # results gets one request for the final answer, without tools.
    "recoveries": {"repeated_call_guard": {}, "fix_empty_final": {"disable_tools": True}},
    "max_turns": 8,
    "retries": {"tool_timeout_s": 10.0},
    # Fewer prompt tokens per tool result: a CPU model reads about 35 tokens/s.
    "transforms": {"tool_result_transforms": ["tool_result_compact_envelope"]},
    "request_overrides": {"temperature": 0},
}


class DemoStep(BaseModel):
    text: str
    expect: str = Field(description="Text the reply must contain for the step to pass")
    expect_note: str | None = Field(
        default=None, description="Text a saved note must contain once the step is done"
    )


STEPS: list[DemoStep] = [
    DemoStep(
        text="What is 23 * 19 + 4? Save the result as a note.", expect="441", expect_note="441"
    ),
    DemoStep(text="Which notes have I saved so far?", expect="441"),
]


class DemoCheck(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class DemoReport(BaseModel):
    session_id: str
    workflow_id: str
    results: list[RunResult]
    checks: list[DemoCheck]
    seconds: list[float] = Field(description="Wall time per message")
    llm_ms: list[int] = Field(description="Latency of each LLM request, in order")

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks)


def demo_runtime(llm: LlmEndpoint) -> RuntimeConfig:
    """The catalog's settings for this model (if it knows it), then the demo's own."""
    return presets.apply(presets.for_model(llm.provider, llm.model), DEMO_OVERRIDES)


def demo_settings(llm: LlmEndpoint) -> SessionSettings:
    return SessionSettings(
        llm=llm,
        runtime=demo_runtime(llm),
        system_prompt=SYSTEM_PROMPT,
        title="durable-loop demo",
    )


def _short(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(row: StoredMessage) -> str | None:
    """One printable line per transcript row (user text is printed by the caller)."""
    message = row.message
    if message.role == "assistant":
        meta = row.meta_as(LlmReplyMeta)
        head = f"  session turn {meta.turn}  llm {meta.latency_ms / 1000:.1f}s"
        if meta.tools_sent == []:
            head += " (no tools)"
        if message.tool_calls:
            calls = ", ".join(f"{c.name}({_short(c.arguments, 60)})" for c in message.tool_calls)
            return f"{head}  → {calls}"
        return f"{head}  answer: {_short(message.content or '(empty)')}"
    if message.role == "tool" and message.envelope is not None:
        envelope = message.envelope
        if envelope.deduplicated:
            outcome = "call made earlier in the session: recorded result reused"
        elif envelope.reused:
            outcome = "repeated identical call: recorded result reused, tools off for the answer"
        elif envelope.ok:
            outcome = _short(json.dumps(envelope.data, separators=(",", ":")), 80)
        else:
            outcome = "error " + ", ".join(str(e) for e in envelope.errors)
        return f"      {message.name} → {outcome}"
    if message.role == "user" and message.synthetic:
        return f"      (loop) {_short(message.content or '')}"
    return None


class TranscriptFollower:
    """Prints transcript rows in seq order as the activities write them."""

    def __init__(self, store: TranscriptStore, session_id: str, emit: Emit) -> None:
        self.store = store
        self.session_id = session_id
        self.emit = emit
        self.next_seq = 0
        self.llm_ms: list[int] = []

    async def drain(self, *, skip_gaps: bool = False) -> None:
        """Print the rows written so far; stop at a seq that is allocated but not yet
        written, unless ``skip_gaps`` (the message is over, so nothing more will land)."""
        for row in await self.store.read(self.session_id, from_seq=self.next_seq):
            if row.seq != self.next_seq and not skip_gaps:
                return
            if row.message.role == "assistant":
                self.llm_ms.append(row.meta_as(LlmReplyMeta).latency_ms)
            line = describe(row)
            if line is not None:
                self.emit(line)
            self.next_seq = row.seq + 1

    async def follow(self, interval_s: float = 0.3) -> None:
        while True:
            await self.drain()
            await asyncio.sleep(interval_s)

    async def send(self, sessions: SessionClient, text: str) -> RunResult:
        task = asyncio.create_task(self.follow())
        try:
            return await sessions.send(self.session_id, text)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await self.drain(skip_gaps=True)


def check_results(
    results: list[RunResult], notebook: Notebook, session_id: str, steps: list[DemoStep]
) -> list[DemoCheck]:
    checks: list[DemoCheck] = []
    for index, (step, result) in enumerate(zip(steps, results, strict=True), start=1):
        reply = result.reply or ""
        checks.append(
            DemoCheck(
                name=f"message {index} completed",
                ok=result.status == "completed",
                detail=str(result.error) if result.error else "",
            )
        )
        checks.append(
            DemoCheck(
                name=f"reply {index} states {step.expect}",
                ok=step.expect in reply,
                detail=_short(reply, 160),
            )
        )
    notes = notebook.notes(session_id)
    for wanted in (step.expect_note for step in steps if step.expect_note):
        checks.append(
            DemoCheck(
                name=f"a note holding {wanted} was saved",
                ok=any(wanted in n.text for n in notes),
                detail="; ".join(n.text for n in notes) or "no notes",
            )
        )
    return checks


async def run_demo_session(
    sessions: SessionClient,
    store: TranscriptStore,
    notebook: Notebook,
    session_id: str,
    settings: SessionSettings,
    emit: Emit,
    steps: list[DemoStep] = STEPS,
) -> DemoReport:
    await sessions.start(session_id, settings)
    results: list[RunResult] = []
    seconds: list[float] = []
    follower = TranscriptFollower(store, session_id, emit)
    for step in steps:
        emit(f"you: {step.text}")
        started = time.monotonic()
        result = await follower.send(sessions, step.text)
        seconds.append(time.monotonic() - started)
        results.append(result)
        emit(f"assistant: {result.reply or '(no reply)'}")
        if result.status != "completed":
            emit(f"  run failed: {result.error}")
    await sessions.close(session_id, "demo finished")
    await sessions.handle(session_id).result()
    return DemoReport(
        session_id=session_id,
        workflow_id=names.session_workflow_id(session_id),
        results=results,
        checks=check_results(results, notebook, session_id, steps),
        seconds=seconds,
        llm_ms=follower.llm_ms,
    )
