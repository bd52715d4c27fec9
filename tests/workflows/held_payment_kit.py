"""A payment held for a person: the call the approval tests script (``pay`` of ``PAY`` as
call c1), the session that holds it, and the tool rows of the workspace audit."""

from __future__ import annotations

from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.approval_kit import approval_settings

PAY = {"amount": 250, "to": "acme"}


def pay_then(answer: str) -> list:
    """The model pays acme 250 (call c1), then answers."""
    return [reply.tool_call("pay", PAY, "c1"), reply.text(answer)]


async def held_payment(w, scripted_llm, env, steps, **settings):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, steps)
    await w.sessions.start(sid, approval_settings(scripted_llm, model, env, **settings))
    first = await w.sessions.send(sid, "pay acme 250", message_id=f"msg-{sid}")
    assert first.status == "awaiting_approval", first
    return model, sid, first


def tool_audit(rows):
    return [(a.op, a.path, a.actor, a.call_id, a.comment) for a in rows if a.target == "tool"]
