"""Public test helpers: a scripted LLM endpoint, replaying histories, and pytest fixtures.

Use them to test your own tools and sessions against real HTTP without a real model::

    from durable_loop.testing import ScriptedLLM, reply

    llm.script("my-model", [reply.tool_call("add", {"a": 1, "b": 2}), reply.text("3")])

``reply_anthropic`` and ``reply_gemini`` build the same replies in those providers' shapes,
``reply_stream`` streamed (server-sent events) OpenAI-compatible ones. ``fetch_histories``
reads every run of a session's workflow history, ``replay_failures`` replays histories
against the current workflow code and reports the runs that do not replay.
"""

from durable_loop.client.history import fetch_histories
from durable_loop.testing import reply, reply_anthropic, reply_gemini, reply_stream
from durable_loop.testing.history import replay_failures
from durable_loop.testing.scripted import RecordedRequest, Reply, ScriptedLLM

__all__ = [
    "RecordedRequest",
    "Reply",
    "ScriptedLLM",
    "fetch_histories",
    "replay_failures",
    "reply",
    "reply_anthropic",
    "reply_gemini",
    "reply_stream",
]
