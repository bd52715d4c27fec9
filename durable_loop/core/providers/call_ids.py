"""Tool-call ids in a form each provider accepts.

A conversation keeps the ids of the model that made its calls: ``call_12345xyz`` from
OpenAI, ``toolu_01A…`` from Anthropic, ``functions.add:0`` from Kimi-style servers,
``dlc_<seq>_<index>`` made up by the runtime. After a fallback or a switch, another
provider reads them, and each has its own rule:

* Anthropic: ``tool_use.id`` must match ``^[a-zA-Z0-9_-]+$`` and be unique in the request
  (``tool_use ids must be unique``, HTTP 400). Kimi-style servers count ids per turn, so
  ``functions.add:0`` can repeat across turns.
* OpenAI: ``tool_calls[].id`` is at most 40 characters (``string_above_max_length``,
  HTTP 400); any characters, and the servers behind this adapter may repeat ids across
  turns, so repeats are left alone.
* Gemini: ``functionCall.id`` / ``functionResponse.id`` are optional and must match each
  other; Google documents no alphabet, so the Anthropic rule (and uniqueness) is kept,
  which every id Gemini itself issues already meets.

The mapping works on one request's message list, after :func:`pair_tool_results` put one
result after each call: an id the provider accepts stays as it is; any other (bad
character, too long, a repeat where ids must be unique) becomes its safe characters plus
``_`` and 8 hex digits of a SHA-256 of the original id (and of its occurrence, for a
repeat). Every wire id in the request is distinct from every other, so two different calls
never share a wire id (a hash that happens to meet a taken id is salted again), and each
result carries the wire id of the call it answers. The mapping depends only on the
messages, so retries and later turns send the same ids. Stored transcripts keep the
original ids; no provider reply refers to an id of the request (replies only carry calls
the provider itself names), so nothing has to be mapped back.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict, deque
from dataclasses import dataclass

from durable_loop.core.messages import Message

HASH_CHARS = 8


@dataclass(frozen=True)
class CallIdRule:
    """What a provider accepts as a tool-call id."""

    max_length: int
    unsafe: re.Pattern[str] | None = None
    """Characters the provider refuses; None when any character is accepted."""
    unique: bool = False
    """Whether every call of the request needs an id of its own."""

    def accepts(self, call_id: str) -> bool:
        if not call_id or len(call_id) > self.max_length:
            return False
        return self.unsafe is None or not self.unsafe.search(call_id)

    def safe_form(self, call_id: str, occurrence: int, salt: int) -> str:
        """The original's safe characters (cut to fit), ``_`` and a short stable hash."""
        keep = self.unsafe.sub("_", call_id) if self.unsafe is not None else call_id
        head = keep[: self.max_length - HASH_CHARS - 1] or "call"
        key = f"{call_id}\x00{occurrence}\x00{salt}" if occurrence or salt else call_id
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{head}_{digest[:HASH_CHARS]}"


ANTHROPIC_IDS = CallIdRule(max_length=64, unsafe=re.compile(r"[^A-Za-z0-9_-]"), unique=True)
GEMINI_IDS = CallIdRule(max_length=64, unsafe=re.compile(r"[^A-Za-z0-9_-]"), unique=True)
OPENAI_IDS = CallIdRule(max_length=40)


def wire_call_ids(messages: list[Message], rule: CallIdRule) -> list[Message]:
    """``messages`` (results already paired with their calls) with provider-safe call ids.

    Returns the same list when every id is accepted as it is.
    """
    originals = [call.id for m in messages if m.role == "assistant" for call in m.tool_calls]
    wire = _assign(originals, rule)
    if wire == originals:
        return messages
    out: list[Message] = []
    position = 0
    answers: dict[str, deque[str]] = defaultdict(deque)
    for message in messages:
        if message.role == "assistant":
            answers = defaultdict(deque)
        if message.role == "assistant" and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                answers[call.id].append(wire[position])
                calls.append(call.model_copy(update={"id": wire[position]}))
                position += 1
            out.append(message.model_copy(update={"tool_calls": calls}))
        elif message.role == "tool" and answers.get(message.tool_call_id or ""):
            new_id = answers[message.tool_call_id or ""].popleft()
            out.append(message.model_copy(update={"tool_call_id": new_id}))
        else:
            out.append(message)
    return out


def _assign(originals: list[str], rule: CallIdRule) -> list[str]:
    """One wire id per call, in order; different calls never share one where ids must be
    unique, and different original ids never share one anywhere."""
    kept = {call_id for call_id in originals if rule.accepts(call_id)}
    taken = set(kept)
    seen: dict[str, int] = defaultdict(int)
    by_key: dict[tuple[str, int], str] = {}
    wire: list[str] = []
    for call_id in originals:
        occurrence = seen[call_id] if rule.unique else 0
        seen[call_id] += 1
        key = (call_id, occurrence)
        if key not in by_key:
            if occurrence == 0 and call_id in kept:
                by_key[key] = call_id
            else:
                salt = 0
                candidate = rule.safe_form(call_id, occurrence, salt)
                while candidate in taken:
                    salt += 1
                    candidate = rule.safe_form(call_id, occurrence, salt)
                taken.add(candidate)
                by_key[key] = candidate
        wire.append(by_key[key])
    return wire


__all__ = ["ANTHROPIC_IDS", "GEMINI_IDS", "OPENAI_IDS", "CallIdRule", "wire_call_ids"]
