"""What the everyday scenarios share: the demo's three tools, the check that a message
ended in a natural-language reply holding the right values, and a policy of ordered calls.
"""

from __future__ import annotations

import re

from durable_loop.core.registry import ToolRegistry
from durable_loop.core.reply_check import text_call_of
from durable_loop.evals.scenario import Action, Check, ModelView, Policy, Scenario, Trace
from durable_loop.tools.everyday import Notebook, demo_registry

TOOLS = ("calculate", "note_add", "note_list")


def everyday_tools() -> ToolRegistry:
    return demo_registry(Notebook())


def _plain(text: str) -> str:
    """Digits without thousands separators, so "1,048,576" holds 1048576."""
    return re.sub(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}\b)", "", text)


def answered(trace: Trace, *values: str, any_of: tuple[str, ...] = ()) -> list[str]:
    """The message completed with a natural-language reply holding every value (and one
    of ``any_of``), not a tool call written as text and not JSON or code."""
    reply = (trace.reply or "").strip()
    if trace.status != "completed":
        return [f"status {trace.status} ({trace.error_code})"]
    if not reply:
        return ["the reply is empty"]
    if text_call_of(reply, set(TOOLS)) is not None:
        return [f"the reply is a tool call written as text: {reply[:80]!r}"]
    if reply[0] in "{[" or "```" in reply:
        return [f"the reply is JSON or code, not a sentence: {reply[:80]!r}"]
    plain = _plain(reply).lower()
    problems = [f"the reply {reply[:80]!r} does not hold {v!r}" for v in values if v not in plain]
    if any_of and not any(word in plain for word in any_of):
        problems.append(f"the reply {reply[:80]!r} holds none of {list(any_of)}")
    return problems


def calls_made(trace: Trace, name: str, *, at_least: int = 1) -> list[str]:
    made = trace.ok_calls(name)
    return [] if made >= at_least else [f"{made} successful {name} call(s), {at_least} needed"]


def steps(*ordered: Action, final: str) -> Policy:
    """A policy that makes the calls in order: one step per distinct successful call (a
    repeated call, answered from the recorded result, is no new step)."""

    def policy(view: ModelView) -> Action:
        done = len({(r.name, r.arguments) for r in view.results if r.ok})
        if view.tools_sent and done < len(ordered):
            return ordered[done]
        return Action.final(final)

    return policy


def everyday_scenario(
    name: str, prompt: str, policy: Policy, check: Check, about: str, *, uses_tools: bool = True
) -> Scenario:
    return Scenario(
        name=name,
        prompt=prompt,
        policy=policy,
        check=check,
        uses_tools=uses_tools,
        runtime={"tool_allowlist": list(TOOLS)},
        extra_tools=everyday_tools,
        description=about,
    )
