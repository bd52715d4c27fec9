"""The approval page end to end in headless Chromium: sign in, read the diff, approve
with a comment, see the outcome; a stale decision is refused with its code."""

from __future__ import annotations

import pytest_asyncio

from durable_loop.service import ServiceDeps
from durable_loop.service.auth import TokenBook
from durable_loop.tools.workspace import workspace_tools
from tests.browser.conftest import artifact, live_service, signed_in
from tests.client.kit import session_with_proposal, workspace_store

TOKENS = {"alice-token-0001": "alice"}


@pytest_asyncio.fixture
async def ws(store_url):
    store = workspace_store(store_url)
    yield store
    await store.close()


async def test_approve_from_the_page(browser, loop_worker, scripted_llm, temporal_env, ws):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(
            w, ws, scripted_llm, temporal_env, title="Quarterly report"
        )
        deps = ServiceDeps(sessions=w.sessions, tokens=TokenBook(TOKENS), workspace=ws)
        async with live_service(deps) as base:
            page = await browser.new_page(viewport={"width": 1100, "height": 900})
            await page.goto(f"{base}/ui/approvals")
            await page.fill("#token", "wrong-token-000")
            await page.click("button:has-text('Sign in')")
            assert "not known" in await page.inner_text("[role=alert]")
            await page.fill("#token", "alice-token-0001")
            await page.click("button:has-text('Sign in')")

            card = page.locator(f"[data-proposal-id='{pending.proposal_id}']")
            await card.wait_for()
            assert await page.inner_text("[data-testid=identity]") == "alice"
            assert "Quarterly report" in await card.inner_text()
            diff = card.locator("[data-testid=diff]")
            assert await diff.locator(".added", has_text='"title": "New title"').count() == 1
            assert await diff.locator(".removed", has_text='"title": "Old title"').count() == 1
            assert await diff.locator(".added", has_text='"reviewed"').count() == 1
            await page.screenshot(path=artifact("approval-page.png"), full_page=True)

            await card.locator("textarea[name=comment]").fill("Looks right to me")
            await card.locator("button[value=approve]").click()
            outcome = page.locator("[data-testid=outcome]")
            await outcome.wait_for()
            text = " ".join((await outcome.inner_text()).split())
            await page.screenshot(path=artifact("approval-decided.png"), full_page=True)
            assert f"Proposal {pending.proposal_id} of session {sid} was committed by alice" in text
            assert "(facts version 1)" in text and "Looks right to me" in text
            assert await page.inner_text("[data-testid=pending-count]") == "0"

            await page.goto(f"{base}/ui/approvals")
            assert await page.locator("[data-testid=proposal]").count() == 0
            assert await page.locator("[data-testid=empty]").count() == 1
    snap = await ws.snapshot(sid)
    assert snap.facts == {"title": "New title", "tags": ["draft", "reviewed"]}
    audit = [a for a in await ws.audit(sid) if a.target == "facts"]
    assert {(a.actor, a.comment) for a in audit} == {("alice", "Looks right to me")}


async def test_a_stale_decision_shows_its_code(
    browser, loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        deps = ServiceDeps(sessions=w.sessions, tokens=TokenBook(TOKENS), workspace=ws)
        async with live_service(deps) as base:
            page = await signed_in(browser, base, "alice-token-0001")
            card = page.locator(f"[data-proposal-id='{pending.proposal_id}']")
            await card.wait_for()
            await w.sessions.reject(sid, pending.proposal_id, "bob")  # decided elsewhere
            await card.locator("button[value=approve]").click()
            error = page.locator("[data-testid=error]")
            await error.wait_for()
            assert (await error.inner_text()).startswith("ALREADY_DECIDED")
    assert (await ws.snapshot(sid)).facts["title"] == "Old title"
