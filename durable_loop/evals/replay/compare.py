"""One message's original and replay compared: calls as (tool, canonical arguments)
multisets, the final answer exactly (and, with a judge, by the judge's verdict)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from durable_loop.core.errors import DurableLoopError
from durable_loop.evals.replay.judge import Verdict
from durable_loop.evals.replay.recorded import RecordedMessage
from durable_loop.evals.replay.tools import ReplayTools


class MessageResult(BaseModel):
    session_id: str
    index: int
    replay_session: str
    original: RecordedMessage
    replay: RecordedMessage
    served: int
    new: int
    new_ran: int = 0
    matched_calls: int
    different_calls: int
    same_calls: bool
    same_answer: bool
    judge: Verdict | None = None
    not_replayed: str | None = Field(
        default=None,
        description='Why the message could not be re-asked ("STALE_VERSION: ..."): the '
        "conversation before it could not be rebuilt; nothing else of the row counts",
    )


def not_replayed(
    session_id: str, index: int, original: RecordedMessage, refused: DurableLoopError
) -> MessageResult:
    """The row of a message whose session could not be rebuilt, with the refusal."""
    return MessageResult(
        session_id=session_id,
        index=index,
        replay_session="",
        original=original,
        replay=RecordedMessage(text=original.text),
        served=0,
        new=0,
        matched_calls=0,
        different_calls=0,
        same_calls=False,
        same_answer=False,
        not_replayed=f"{refused.code}: {refused.message}",
    )


def compare(
    session_id: str,
    index: int,
    replay_id: str,
    original: RecordedMessage,
    replay: RecordedMessage,
    tools: ReplayTools,
) -> MessageResult:
    before = Counter((c.name, c.arguments) for c in original.calls)
    after = Counter((c.name, c.arguments) for c in replay.calls)
    matched = sum((before & after).values())
    logged = tools.calls_of(replay_id)
    return MessageResult(
        session_id=session_id,
        index=index,
        replay_session=replay_id,
        original=original,
        replay=replay,
        served=sum(1 for c in logged if c.served),
        new=sum(1 for c in logged if not c.served),
        new_ran=sum(1 for c in logged if c.ran),
        matched_calls=matched,
        different_calls=sum(before.values()) + sum(after.values()) - 2 * matched,
        same_calls=before == after,
        same_answer=original.answer == replay.answer,
    )
