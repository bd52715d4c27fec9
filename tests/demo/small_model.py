"""A scripted stand-in for the packaged 1.5B model, behaving as it did in real demo runs.

It answers from what the request holds (tool results, whether tools were sent), never
from hard-coded numbers: compute, save, list, go quiet, then answer once the tools are gone
(the notes, when the request asks for them and a listing is among the results).
Asked by the conversation gate, it names the tool it is about to call.
``repeating=True`` plays the other habit of small models: calling the same tool again.
"""

from __future__ import annotations

import json
from typing import Any

from durable_loop.core.conversation_gate import SCHEMA_NAME
from durable_loop.core.router.prompts import LATEST_MESSAGE
from durable_loop.testing import reply
from durable_loop.testing.scripted import RecordedRequest, Reply

EXPRESSION = "23 * 19 + 4"


def _tool_results(request: RecordedRequest) -> dict[str, Any]:
    """Tool name -> the ``data`` of its latest result, from the request's own messages."""
    names = {}
    for message in request.messages:
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
    results: dict[str, Any] = {}
    for message in request.messages:
        if message["role"] == "tool":
            results[names[message["tool_call_id"]]] = json.loads(message["content"]).get("data")
    return results


def _saved(results: dict[str, Any]) -> str:
    return "Your notes: " + "; ".join(note["text"] for note in results["note_list"])


def _last_user_text(request: RecordedRequest) -> str:
    users = [m for m in request.messages if m["role"] == "user"]
    return str(users[-1]["content"]) if users else ""


def is_gate(request: RecordedRequest) -> bool:
    """The conversation gate's request (recovery ``withhold_tools_from_conversation``)."""
    asked = request.body.get("response_format") or {}
    return (asked.get("json_schema") or {}).get("name") == SCHEMA_NAME


def small_model(request: RecordedRequest, *, repeating: bool = False) -> Reply:
    results = _tool_results(request)
    last = request.messages[-1]
    question = _last_user_text(request)
    if is_gate(request):
        latest = question.rpartition(LATEST_MESSAGE)[2]
        return reply.text(json.dumps({"tool": "note_list" if "notes" in latest else "calculate"}))
    if "tools" not in request.body:
        if "notes" in question and "note_list" in results:
            return reply.text(_saved(results))
        value = results.get("calculate")
        return reply.text(f"The result of {EXPRESSION} is {value}.")
    if last["role"] == "user" and "notes" in question:
        return reply.tool_call("note_list", {})
    if last["role"] == "user":
        return reply.tool_call("calculate", {"expression": EXPRESSION})
    tool = request.messages[-2]["tool_calls"][0]["function"]["name"]
    if repeating:
        return reply.tool_call(
            tool, json.loads(request.messages[-2]["tool_calls"][0]["function"]["arguments"])
        )
    if tool == "calculate":
        return reply.tool_call("note_add", {"text": f"{EXPRESSION} = {results['calculate']}"})
    if tool == "note_add":
        return reply.tool_call("note_list", {})
    if tool == "note_list" and "notes" in question:
        return reply.text(_saved(results))
    return reply.text("")
