"""The trace at 80 columns: one block per message and per turn, every line within the
width and nothing cut to an ellipsis (only the bounded arguments and replies end in
"… (N chars ...)", which says so). Replies are bounded unless asked for whole."""

from __future__ import annotations

import json
import re

from rich.cells import cell_len

from durable_loop.client.trace.fetch import load_trace
from durable_loop.testing import reply
from tests.client.trace.kit import decided_session, rendered
from tests.conftest import settings_for
from tests.workflows.approval_kit import Payments
from tests.workflows.toolkit import ToolLog, recording_tools

ANSWER = "The calculation is done: one and two make three. " * 10
QUESTION = "please calculate the sum of one and two, then take a short nap called siesta"
OUR_MARKER = re.compile(r"…\s+\(\d+\s+chars")


def assert_fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if cell_len(line) > width]
    assert not wide, wide
    assert "…" not in OUR_MARKER.sub("", text), text


async def test_a_session_with_calls_and_a_long_reply_reads_at_80_columns(
    loop_worker, scripted_llm, store_url
):
    model, sid = "calculator-model-with-a-rather-long-name-v2", "s-eighty-columns-0001"
    label = "siesta " + "z" * 250
    scripted_llm.script(
        model,
        [
            reply.tool_calls(
                ("add", {"a": 1, "b": 2}, "call-add-1"),
                ("nap", {"label": label, "seconds": 0}, "call-nap-2"),
            ),
            reply.text(ANSWER),
        ],
    )
    async with loop_worker(recording_tools(ToolLog())) as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        result = await w.sessions.send(sid, QUESTION)
        bounded = await load_trace(w.sessions.client, sid, db_url=store_url)
        whole = await load_trace(w.sessions.client, sid, db_url=store_url, reply_chars=None)
    assert result.reply == ANSWER

    text = rendered(bounded, width=80)
    print(text)
    assert_fits(text, 80)
    assert f"user: {QUESTION[:40]}" in text
    assert "add call-add-1 ok" in text and '{"a": 1, "b": 2}' in text
    nap = json.dumps({"label": label, "seconds": 0})
    assert f"… ({len(nap)} chars)" in text  # the nap's arguments, cut at 200
    [message] = bounded.by_message
    assert message.reply is not None
    assert (message.reply.truncated, message.reply.chars) == (True, len(ANSWER))
    assert message.reply.text == ANSWER[:300]
    assert f"… ({len(ANSWER)} chars; --full for all)" in " ".join(text.split())

    [message] = whole.by_message
    assert message.reply is not None and not message.reply.truncated
    assert message.reply.text == ANSWER
    whole_text = rendered(whole, width=80)
    assert_fits(whole_text, 80)
    assert "--full for all" not in whole_text
    assert " ".join(whole_text.split()).count("make three.") == 10


async def test_decisions_and_a_budget_change_read_at_80_columns(
    loop_worker, scripted_llm, temporal_env, store_url
):
    async with loop_worker(Payments().registry()) as w:
        session = await decided_session(w, scripted_llm, temporal_env)
        trace = await load_trace(w.sessions.client, session.session_id, db_url=store_url)
    text = rendered(trace, width=80)
    print(text)
    assert_fits(text, 80)
    flat = " ".join(text.split())
    assert "bob rejected pay c2 — " in flat
    assert "ops changed the budget: turns per message 12 → 4" in flat
    assert "messages: 4 (4 completed, 0 failed)" in flat
