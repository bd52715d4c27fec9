"""Tool results right after their call: the ordering rule every provider enforces.

Anthropic wants each ``tool_result`` in the user turn right after its ``tool_use``, Gemini
one ``functionResponse`` per ``functionCall`` in the next turn, OpenAI a ``tool`` message
for every ``tool_call_id``. The transcript already stores results right after their call;
this pass makes the rule hold for any message list (a trimmed context, an interrupted run).
"""

from __future__ import annotations

from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ErrorCode
from durable_loop.core.messages import Message

MISSING_RESULT = "no result was recorded for this call"


def pair_tool_results(messages: list[Message]) -> list[Message]:
    """Each assistant message with calls is followed by exactly one result per call.

    Results are looked up between the call and the next assistant message, matched by
    call id (ids may repeat across turns on some servers, so never globally); a missing
    result becomes a TOOL_ERROR envelope, and results with no call before them are dropped.
    Other messages found among the results keep their order after them.
    """
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.role == "tool":
            continue  # no call before it in this window: an orphan
        out.append(message)
        if message.role != "assistant" or not message.tool_calls:
            continue
        window_end = index
        while window_end < len(messages) and messages[window_end].role != "assistant":
            window_end += 1
        window = messages[index:window_end]
        results = [m for m in window if m.role == "tool"]
        used: set[int] = set()
        for call in message.tool_calls:
            match = next(
                (
                    i
                    for i, result in enumerate(results)
                    if i not in used and result.tool_call_id == call.id
                ),
                None,
            )
            if match is None:
                failure = Envelope.failure(ErrorCode.TOOL_ERROR, MISSING_RESULT)
                out.append(Message.tool_result(call.id, call.name, failure))
            else:
                used.add(match)
                result = results[match]
                out.append(result if result.name else result.model_copy(update={"name": call.name}))
        out.extend(m for m in window if m.role != "tool")
        index = window_end
    return out
