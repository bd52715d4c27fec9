"""The recorded sessions of the recoveries and the router pipeline: each named recovery
and patch once, as ``record.py`` writes them to the histories checked in beside it."""

from __future__ import annotations

import json

from durable_loop.client.sessions import SessionClient
from durable_loop.core.config import RuntimeConfig
from durable_loop.testing import ScriptedLLM, reply
from tests.conftest import settings_for


async def recoveries(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """Every named recovery once: a text call after the repeat guard (finalized), a reply
    naming a tool (sent back), invalid arguments repaired, oversized arguments shortened."""
    sid, model = "recorded-recoveries", "recorded-recoveries-model"
    long_label = "label " * 60
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 2, "b": 3}),
            reply.tool_call("add", {"a": 2, "b": 3}, "again"),
            reply.text('{"name": "add", "arguments": {"a": 2, "b": 3}}'),
            reply.text("2 + 3 is 5."),
            reply.text("You can use the `add` function for that."),
            reply.tool_call("add", {"a": "one", "b": 1}, "typed"),
            reply.text('{"a": 1, "b": 1}'),
            reply.text("1 + 1 is 2."),
            reply.tool_call("nap", {"seconds": 0, "label": long_label}, "long"),
            reply.text("short label"),
            reply.text("Napped."),
        ],
    )
    runtime = RuntimeConfig(
        max_tool_args_bytes=200,
        finalize_text_call_reply=True,
        call_referred_tool=True,
        repair_invalid_arguments=True,
        shorten_oversized_arguments=True,
    )
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "what is 2+3?", message_id="m1")
    await sessions.send(sid, "and 1+1?", message_id="m2")
    await sessions.send(sid, "nap with a long label", message_id="m3")
    await sessions.close(sid)
    return sid


def _route(choice: str, tool: str | None = None, question: str | None = None) -> reply.Reply:
    return reply.text(json.dumps({"choice": choice, "tool": tool, "question": question}))


async def requested_tool(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``call_requested_tool``: the model answers after the first of two tools the message
    names and is sent back for the second."""
    sid, model = "recorded-requested-tool", "recorded-requested-tool-model"
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 2, "b": 3}),
            reply.text("Done."),
            reply.tool_call("nap", {"seconds": 0, "label": "x"}, "nap"),
            reply.text("Done."),
        ],
    )
    runtime = RuntimeConfig(call_requested_tool=True)
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, 'add 2 and 3 with add, then nap 0 s with nap (label "x")')
    await sessions.close(sid)
    return sid


GATED = RuntimeConfig(recoveries=["withhold_tools_from_conversation", "call_requested_tool"])
ROUTED_TO_NAP = [reply.text('{"tool": "nap"}'), reply.tool_call("add", {"a": 2, "b": 3})]


async def _gated(
    sessions: SessionClient, llm: ScriptedLLM, name: str, steps: list[reply.Reply], text: str
) -> str:
    """One message of a session with the conversation gate and ``call_requested_tool``."""
    sid, model = f"recorded-{name}", f"recorded-{name}-model"
    llm.script(model, steps)
    await sessions.start(sid, settings_for(llm, model, runtime=GATED))
    await sessions.send(sid, text, message_id="m1")
    await sessions.close(sid)
    return sid


async def routed_tool(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``call_requested_tool`` for the tool the conversation gate routed the message to:
    the model adds, answers without the nap, and is sent back for it (patch
    ``call-routed-tool``). Recorded before patch ``call-routed-tool-it-names``, under which
    this message, naming nothing of the nap, is left to its answer
    (:func:`routed_tool_not_named`): the checked-in run is that patch's old branch."""
    steps = [
        *ROUTED_TO_NAP,
        reply.text("It is 5."),
        reply.tool_call("nap", {"seconds": 0, "label": "5"}, "nap"),
        reply.text("It is 5; rested."),
    ]
    return await _gated(sessions, llm, "routed-tool", steps, "add 2 and 3, then take a short break")


async def routed_tool_not_named(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """:func:`routed_tool`'s message under patch ``call-routed-tool-it-names``: "take a
    short break" names nothing of the nap the gate guessed, so the addition's answer
    stands."""
    steps = [*ROUTED_TO_NAP, reply.text("It is 5.")]
    text = "add 2 and 3, then take a short break"
    return await _gated(sessions, llm, "routed-tool-not-named", steps, text)


async def routed_tool_made_up(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """The gate routes to the nap, the model calls a tool that does not exist and answers:
    the routed tool is not forced after calls of made-up tools only (patch
    ``call-routed-tool-after-offered-call``)."""
    steps = [
        reply.text('{"tool": "nap"}'),
        reply.tool_call("area_of_triangle", {"base": 10, "height": 5}),
        reply.text("No tool computes that; the area is 25."),
    ]
    text = "what is the area of a triangle with base 10 and height 5?"
    return await _gated(sessions, llm, "routed-tool-made-up", steps, text)


async def referred_tool_made_up(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """Asked something no tool serves, the model calls a tool that does not exist, then
    tells the person to use ``add``: the referral stands as the answer, no call is
    required after calls of made-up tools only (patch
    ``call-referred-tool-after-offered-call``)."""
    sid, model = "recorded-referred-tool-made-up", "recorded-referred-tool-made-up-model"
    llm.script(
        model,
        [
            reply.tool_call("find_restaurant", {"city": "New York"}),
            reply.text("I cannot search restaurants; you can use the `add` function."),
        ],
    )
    runtime = RuntimeConfig(call_referred_tool=True)
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "recommend a Chinese restaurant in New York", message_id="m1")
    await sessions.close(sid)
    return sid


async def unasked_call(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``refuse_unasked_call``: after the asked-for addition the model naps with a label
    nobody gave; the nap is refused (ARGUMENTS_NOT_GIVEN) and the message finalized (patch
    ``refuse-unasked-call``)."""
    sid, model = "recorded-unasked-call", "recorded-unasked-call-model"
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 37, "b": 43}),
            reply.tool_call("nap", {"seconds": 5, "label": "siesta"}, "nap"),
            reply.text("37 + 43 is 80."),
        ],
    )
    runtime = RuntimeConfig(recoveries=["refuse_unasked_call"])
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "add 37 and 43", message_id="m1")
    await sessions.close(sid)
    return sid


async def unsaid_values(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``ask_for_unsaid_values``: asked something no tool serves, the model's first call
    adds numbers nobody gave; it is refused (ARGUMENTS_NOT_GIVEN) and the model answers in
    words (patch ``ask-for-unsaid-values``). The next message's first call, with the
    person's numbers, runs."""
    sid, model = "recorded-unsaid-values", "recorded-unsaid-values-model"
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 120, "b": 10}),
            reply.text("About 9.109e-31 kg."),
            reply.tool_call("add", {"a": 37, "b": 43}),
            reply.text("37 + 43 is 80."),
        ],
    )
    runtime = RuntimeConfig(recoveries=["refuse_unasked_call", "ask_for_unsaid_values"])
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "what is the mass of an electron?", message_id="m1")
    await sessions.send(sid, "add 37 and 43", message_id="m2")
    await sessions.close(sid)
    return sid


async def done_at_once(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``finalize_when_done``: a call that carries the whole request is followed by the
    answer request without tools (patch ``finalize-when-done``); a request with a value
    left keeps the tools for its second call, then is finalized."""
    sid, model = "recorded-done-at-once", "recorded-done-at-once-model"
    llm.script(
        model,
        [
            reply.tool_call("add", {"a": 37, "b": 43}),
            reply.text("37 + 43 is 80."),
            reply.tool_call("add", {"a": 8, "b": 4}),
            reply.tool_call("add", {"a": 12, "b": 5}),
            reply.text("The total is 17."),
        ],
    )
    runtime = RuntimeConfig(recoveries=["repeated_call_guard", "finalize_when_done"])
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "add 37 and 43", message_id="m1")
    await sessions.send(sid, "add 8 and 4, then add 5 to the total", message_id="m2")
    await sessions.close(sid)
    return sid


async def unknown_tool_repeat(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """The repeated-call guard and a made-up tool: its identical second call is a repeat
    (patch ``repeat-unknown-tool-call``), answered with the tools withdrawn and the
    finalization request."""
    sid, model = "recorded-unknown-tool-repeat", "recorded-unknown-tool-repeat-model"
    made_up = reply.tool_call("piano_tips", {"piano": "upright"})
    llm.script(model, [made_up, made_up, reply.text("Tune it twice a year.")])
    runtime = RuntimeConfig(
        recoveries=["repeated_call_guard", "retry_after_tool_error", "finalize_after_repeat"]
    )
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "how do I look after an upright piano?", message_id="m1")
    await sessions.close(sid)
    return sid


async def continue_after_repeat(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """``continue_after_repeat``: a repeat while a value of the request is left brings the
    tools back for the next call (patch ``continue-after-repeat``), which
    ``finalize_when_done`` follows with the answer request."""
    sid, model = "recorded-continue-after-repeat", "recorded-continue-after-repeat-model"
    first = reply.tool_call("add", {"a": 2, "b": 3})
    llm.script(
        model,
        [first, first, reply.tool_call("add", {"a": 4, "b": 6}), reply.text("5 and 10.")],
    )
    runtime = RuntimeConfig(
        recoveries=[
            "repeated_call_guard",
            "continue_after_repeat",
            "finalize_after_repeat",
            "finalize_when_done",
        ]
    )
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "add 2 and 3, and add 4 and 6", message_id="m1")
    await sessions.close(sid)
    return sid


async def continue_after_repeat_narrowed(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """Repeats ``continue_after_repeat`` leaves to ``finalize_after_repeat`` (patch
    ``continue-after-repeat-narrowed``): only a name of the request left, then a made-up
    tool's call repeated while a number is left."""
    sid, model = "recorded-continue-narrowed", "recorded-continue-narrowed-model"
    nap = reply.tool_call("nap", {"seconds": 0, "label": "Alpha"})
    weigh = reply.tool_call("weigh", {"kg": 5})
    llm.script(
        model, [nap, nap, reply.text("Napped as Alpha."), weigh, weigh, reply.text("No scale.")]
    )
    runtime = RuntimeConfig(
        recoveries=["repeated_call_guard", "continue_after_repeat", "finalize_after_repeat"]
    )
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "Nap with the label Alpha for Beta", message_id="m1")
    await sessions.send(sid, "weigh 5 kg and 7 kg", message_id="m2")
    await sessions.close(sid)
    return sid


async def router_clarify(sessions: SessionClient, llm: ScriptedLLM) -> str:
    """The router pipeline's checked clarify: overruled (the message holds the values),
    kept (the executor invents them), and a clarify naming nothing read as ``none``."""
    sid, model = "recorded-router-clarify", "recorded-router-clarify-model"
    llm.script(
        model,
        [
            _route("clarify", "add", "Which numbers?"),
            reply.text(json.dumps({"tool": "add", "args": {"a": 2, "b": 3}})),
            reply.text("2 + 3 is 5."),
            _route("clarify", "add", "Which numbers?"),
            reply.text(json.dumps({"tool": "add", "args": {"a": 1, "b": 7}})),
            _route("clarify", None, "What is a haiku?"),
            reply.text("Numbers sum, quietly."),
        ],
    )
    runtime = RuntimeConfig(loop_strategy="router")
    await sessions.start(sid, settings_for(llm, model, runtime=runtime))
    await sessions.send(sid, "add 2 and 3", message_id="m1")
    await sessions.send(sid, "add two numbers", message_id="m2")
    await sessions.send(sid, "write a haiku about sums", message_id="m3")
    await sessions.close(sid)
    return sid
