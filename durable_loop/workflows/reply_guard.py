"""The recoveries and checks a message's final reply goes through, in order.

On every final reply the loop asks :meth:`ReplyGuard.judge`, which runs

1. the ``reply`` recoveries the config uses (``fix_empty_final``,
   ``retry_after_tool_error``, ...), in registry order;
2. for a message with an output schema, its typed answer (``correct_typed_answer``); a
   typed answer is judged by its schema alone;
3. the answer check, always on (core/reply_check: a tool call written as text, a reply
   without words, a cut-off JSON call never complete a message), whose refusal the
   ``failure`` recoveries (``finalize_text_call_reply``) may answer once before the
   message fails with REPLY_NOT_AN_ANSWER;
4. on a plain-text answer, the ``answer`` recoveries (``call_referred_tool``,
   ``call_requested_tool``).

The first that acts decides; None lets the reply end the message. Each recovery asks its
patch (``workflow.patched``) exactly where it always did, so every recorded history
takes the same branches. Deterministic workflow code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durable_loop.core.activity_contracts import LlmTurnOutput, ToolCallSummary
    from durable_loop.core.config import RuntimeConfig
    from durable_loop.core.contracts import ParkedMessage, RunResult
    from durable_loop.core.recoveries import (
        Action,
        Event,
        MessageFacts,
        Recovery,
        ask_for_unsaid_values,
        fix_empty_final,
        judges,
        refuse_unasked_call,
        retry_after_tool_error,
    )
    from durable_loop.core.recoveries import finalize_text_call_reply as finalize
    from durable_loop.core.recoveries.base import RecoverySettings, Stage
    from durable_loop.core.reply_check import answer_check

from durable_loop.workflows.typed_answers import TypedAnswer

JUDGED: tuple[Stage, ...] = ("reply", "failure", "answer", "repeat", "results")


class ReplyGuard:
    """What the loop knows about the message, and the recoveries its config uses."""

    def __init__(
        self,
        config: RuntimeConfig,
        registered: set[str],
        offered: list[str],
        descriptions: Mapping[str, str],
    ) -> None:
        self.config = config
        self.facts = MessageFacts(
            registered=frozenset(registered),
            offered=offered,
            patched=workflow.patched,
            descriptions=descriptions,
        )
        self.stages: dict[Stage, list[tuple[Recovery[Any], RecoverySettings]]] = {
            stage: judges(config.recoveries, stage) for stage in JUDGED
        }

    @property
    def wants_request_left(self) -> bool:
        """Whether the replies' ``request_left`` is asked for: only some recoveries read it
        (``finalize_when_done``, ``continue_after_repeat``), so without them the activities
        skip the work."""
        return any(r.reads_request_left for stage in JUDGED for r, _ in self.stages[stage])

    def judge(
        self, out: LlmTurnOutput, result: RunResult, typed: TypedAnswer | None
    ) -> Action | None:
        event = Event(text=out.text, tool_calls_made=len(result.tool_calls))
        action = self._first("reply", event, result)
        if action is not None:
            return action
        if typed is not None:
            prompt = typed.judge(out, result)
            return None if prompt is None else Action(prompt=prompt)
        recovered = self.facts.used(finalize.NAME) > 0
        failure, plain = answer_check(
            out.text, self.facts.registered, self.facts.patched, recovered=recovered
        )
        if failure is not None:
            action = self._first("failure", replace(event, failure=failure), result)
            return action or Action(error=failure)
        return self._first("answer", event, result) if plain else None

    def after_repeat(self, out: LlmTurnOutput, made_up: bool, result: RunResult) -> Action | None:
        """Right after the repeated-call guard answered a repeat in ``out``; ``made_up`` when
        a repeated call was of a tool that does not exist."""
        event = Event(request_left=_left(out), made_up_repeat=made_up)
        return self._first("repeat", event, result)

    def after_results(self, out: LlmTurnOutput, calls_ok: bool, result: RunResult) -> Action | None:
        """Right after a turn's calls were run and recorded (none repeated, refused or held):
        ``out`` is the reply that made them, ``calls_ok`` whether every one succeeded."""
        return self._first("results", Event(request_left=_left(out), calls_ok=calls_ok), result)

    def after_unasked(self, call: ToolCallSummary, by: str, result: RunResult) -> Action:
        """Right after ``by`` (``refuse_unasked_call`` or ``ask_for_unsaid_values``) refused
        ``call`` for values nobody gave: the request for an answer in words."""
        settings = self.config.recoveries[by]
        self.facts.uses[by] = self.facts.used(by) + 1
        result.recoveries.append(by)
        if isinstance(settings, ask_for_unsaid_values.AskForUnsaidValues):
            return ask_for_unsaid_values.finalization(settings, call.name, call.args_unsaid)
        assert isinstance(settings, refuse_unasked_call.RefuseUnaskedCall)
        return refuse_unasked_call.finalization(settings, call.name, call.args_unsaid, self.facts)

    def _first(self, stage: Stage, event: Event, result: RunResult) -> Action | None:
        for recovery, settings in self.stages[stage]:
            assert recovery.judge is not None
            action = recovery.judge(settings, event, self.facts)
            if action is not None:
                self.facts.uses[recovery.name] = self.facts.used(recovery.name) + 1
                if recovery.reported:
                    result.recoveries.append(recovery.name)
                return action
        return None

    def parked(self) -> dict[str, Any]:
        """What a message parked on held calls carries of its recoveries."""
        return {
            "finalization_used": self.facts.used(fix_empty_final.NAME) > 0,
            "error_retries_used": self.facts.used(retry_after_tool_error.NAME),
        }

    def resume(self, parked: ParkedMessage) -> None:
        self.facts.uses[fix_empty_final.NAME] = int(parked.finalization_used)
        self.facts.uses[retry_after_tool_error.NAME] = parked.error_retries_used


def _left(out: LlmTurnOutput) -> tuple[str, ...] | None:
    return None if out.request_left is None else tuple(out.request_left)
