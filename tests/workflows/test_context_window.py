"""The context window in a running session: what is left out, where it is recorded, and the
optional summary that replaces the dropped prefix."""

from __future__ import annotations

from durable_loop.activities.summarize import SUMMARIZER_PROMPT
from durable_loop.core.config import RuntimeConfig
from durable_loop.core.context_window import SUMMARY_PREFIX
from durable_loop.core.endpoint import ContextWindow
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


def windowed(scripted_llm, model: str, max_chars: int, **runtime):
    settings = settings_for(scripted_llm, model, runtime=RuntimeConfig(**runtime))
    llm = settings.llm.model_copy(update={"context_window": ContextWindow(max_chars=max_chars)})
    return settings.model_copy(update={"llm": llm})


def contents(request) -> list[str]:
    return [m["content"] for m in request.messages]


async def test_oldest_messages_are_left_out_and_recorded(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("b" * 100), reply.text("d" * 100), reply.text("f")])
    async with loop_worker() as w:
        await w.sessions.start(sid, windowed(scripted_llm, model, 320))
        for text in ("a" * 100, "c" * 100, "e" * 30):
            result = await w.sessions.send(sid, text)
        stored = await w.store.read(sid)

    assert result.status == "completed"
    _, second, third = scripted_llm.requests(model)
    assert contents(second) == ["a" * 100, "b" * 100, "c" * 100]
    assert contents(third) == ["c" * 100, "d" * 100, "e" * 30]
    meta = stored[5].meta["context"]
    assert meta["dropped"] == 2 and meta["dropped_seqs"] == [0, 1]
    assert meta["first_kept_seq"] == 2 and meta["budget_chars"] == 320
    assert meta["dropped_chars"] == 200
    assert "context" not in stored[1].meta and "context" not in stored[3].meta


async def test_dropped_prefix_is_summarised_once_and_sent_in_its_place(loop_worker, scripted_llm):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.text("b" * 100),
            reply.text("d" * 100),
            reply.text("f"),
            reply.text("The user sent a long a-line; the assistant answered with b."),
            reply.text("h"),
        ],
    )
    settings = windowed(scripted_llm, model, 320, summarize_dropped_context=True)
    async with loop_worker() as w:
        await w.sessions.start(sid, settings)
        for text in ("a" * 100, "c" * 100, "e" * 30):
            await w.sessions.send(sid, text)
        last = await w.sessions.send(sid, "g")
        stored = await w.store.read(sid)

    assert last.status == "completed" and last.reply == "h"
    requests = scripted_llm.requests(model)
    assert len(requests) == 5
    summary_request, after = requests[3], requests[4]
    assert summary_request.messages[0] == {"role": "system", "content": SUMMARIZER_PROMPT}
    assert "user: " + "a" * 100 in summary_request.messages[1]["content"]
    assert "c" * 100 not in summary_request.messages[1]["content"]
    assert after.messages[0]["role"] == "system"
    assert after.messages[0]["content"].startswith(SUMMARY_PREFIX)
    assert "a" * 100 not in contents(after) and contents(after)[-1] == "g"
    (summary,) = [m for m in stored if "summary_of" in m.meta]
    assert summary.meta["summary_of"] == 2 and summary.message.synthetic
    assert stored[-1].meta["context"]["summary_seq"] == summary.seq
    assert last.usage.input_tokens == 20  # the summary call is accounted with the turn
