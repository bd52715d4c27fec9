"""The workspace page in headless Chromium: from a proposal's card to the session's
committed facts, locks, version and audit rows."""

from __future__ import annotations

from durable_loop.service import ServiceDeps
from durable_loop.service.auth import TokenBook
from durable_loop.store.workspace import ChangeSource
from durable_loop.tools.workspace import workspace_tools
from tests.browser.conftest import artifact, live_service, signed_in
from tests.client.kit import session_with_proposal
from tests.conftest import unique

TOKENS = {"alice-token-0001": "alice"}


async def test_the_workspace_page_shows_facts_locks_and_audit(
    browser, loop_worker, scripted_llm, temporal_env, ws
):
    async with loop_worker(workspace_tools(ws)) as w:
        _, sid, pending = await session_with_proposal(w, ws, scripted_llm, temporal_env)
        await ws.apply(
            sid, "draft", [{"op": "add", "path": "/outline", "value": ["intro"]}],
            ChangeSource(actor="bob", actor_kind="human"),
        )  # fmt: skip
        await ws.set_lock(sid, "/tags", ChangeSource(actor="bob", actor_kind="human"))
        deps = ServiceDeps(sessions=w.sessions, tokens=TokenBook(TOKENS), workspace=ws)
        async with live_service(deps) as base:
            viewport = {"width": 1100, "height": 900}
            page = await signed_in(browser, base, "alice-token-0001", viewport=viewport)
            card = page.locator(f"[data-proposal-id='{pending.proposal_id}']")
            await card.locator("[data-testid=workspace-link]").click()

            await page.locator("[data-testid=facts]").wait_for()
            assert await page.inner_text("[data-testid=version]") == "3"
            assert await page.inner_text("[data-testid=facts-version]") == "0"
            facts = page.locator("[data-testid=facts]")
            assert '"Old title"' in await facts.locator("[data-path='/title']").inner_text()
            assert "locked" in await facts.locator("[data-path='/tags']").inner_text()
            draft = page.locator("[data-testid=draft]")
            assert '["intro"]' in await draft.locator("[data-path='/outline']").inner_text()
            audit = " ".join((await page.inner_text("[data-testid=audit]")).split())
            assert "proposal propose /title" in audit and pending.proposal_id in audit
            assert "locks lock /tags" in audit and "bob (human)" in audit
            await page.screenshot(path=artifact("workspace-page.png"), full_page=True)

            await page.goto(f"{base}/ui/sessions/{unique('nope')}/workspace")
            error = page.locator("[data-testid=error]")
            assert (await error.inner_text()).startswith("SESSION_NOT_FOUND")
