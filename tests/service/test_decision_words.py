"""A proposal that settled without a commit reads as what happened, on the page and in a
refusal (not ``conflict by alice`` or ``is already conflict``)."""

from __future__ import annotations

from durable_loop.service.auth import COOKIE
from durable_loop.store.workspace import ChangeSource
from durable_loop.tools.workspace import workspace_tools
from tests.client.kit import session_with_proposal
from tests.service.conftest import ALICE
from tests.service.test_api import code_of


async def test_a_conflict_outcome_reads_as_not_committed_on_the_page(
    loop_worker, scripted_llm, temporal_env, service, ws
):
    async with loop_worker(workspace_tools(ws)) as w, service(w) as http:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        edit = [{"op": "replace", "path": "/title", "value": "Edited by hand"}]
        await ws.apply(sid, "facts", edit, ChangeSource(actor="dana", actor_kind="human"))
        url = f"/v1/sessions/{sid}/proposals/{pending.proposal_id}/decision"
        body = {"verdict": "confirm", "fingerprint": pending.fingerprint}
        decided = await http.post(url, json=body, headers=ALICE)
        again = await http.post(url, json=body, headers=ALICE)
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get(f"/ui/approvals?session={sid}&proposal={pending.proposal_id}")
    assert decided.status_code == 200 and decided.json()["status"] == "conflict"
    assert (again.status_code, code_of(again)) == (409, "ALREADY_DECIDED")
    assert "was decided: approved, but not committed" in again.json()["error"]["message"]
    banner = page.text.split('data-testid="outcome">')[1].split("</p>")[0]
    text = " ".join(banner.split())
    assert "was <strong>not committed: approved by alice, but the facts changed after it" in text
    assert "conflict by" not in text
