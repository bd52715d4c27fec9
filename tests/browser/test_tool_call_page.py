"""Held tool calls on the approval page, in headless Chromium: read the arguments, edit
them, see the edit as a diff, approve the edited call; the tool runs once with it."""

from __future__ import annotations

from durable_loop.service import ServiceDeps
from durable_loop.service.auth import TokenBook
from durable_loop.testing import reply
from tests.browser.conftest import artifact, live_service
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings
from tests.workflows.proposal_kit import tool_envelopes

TOKENS = {"alice-token-0001": "alice"}
PAY = {"amount": 250, "to": "acme"}


async def test_approve_an_edited_call_from_the_page(
    browser, loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_call("pay", PAY, "c1"), reply.text("Paid 120.")])
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay acme", message_id="m1")
        deps = ServiceDeps(sessions=w.sessions, tokens=TokenBook(TOKENS))
        async with live_service(deps) as base:
            page = await browser.new_page(viewport={"width": 1100, "height": 900})
            await page.goto(f"{base}/ui/approvals")
            await page.fill("#token", "alice-token-0001")
            await page.click("button:has-text('Sign in')")
            card = page.locator("[data-call-id='c1']")
            await card.wait_for()
            assert await page.inner_text("[data-testid=tool-call-count]") == "1"
            shown = await card.locator("[data-testid=arguments]").inner_text()
            assert '"amount": 250' in shown and '"to": "acme"' in shown
            await card.locator("textarea[name=arguments]").fill('{"amount": 120, "to": "acme"}')
            await card.locator("textarea[name=comment]").fill("120 is the agreed price")
            await card.locator("button[value=approve]").click()

            diff = page.locator("[data-testid=edit-diff]")
            await diff.wait_for()
            assert await diff.locator(".removed", has_text='"amount": 250').count() == 1
            assert await diff.locator(".added", has_text='"amount": 120').count() == 1
            assert await diff.locator(".context", has_text='"to": "acme"').count() == 1
            assert payments.made == []
            await page.screenshot(path=artifact("tool-call-edit.png"), full_page=True)
            await page.click("button:has-text('Approve edited call')")

            outcome = page.locator("[data-testid=tool-call-outcome]")
            await outcome.wait_for()
            text = " ".join((await outcome.inner_text()).split())
            assert f"Tool call c1 (pay) of session {sid} was approved by alice" in text
            assert "with edited amount" in text and "120 is the agreed price" in text
            assert await page.inner_text("[data-testid=tool-call-count]") == "0"
        final = await w.sessions.message_result(sid, first.message_id)
    assert final.reply == "Paid 120." and [(a, to) for a, to, _ in payments.made] == [(120, "acme")]
    [envelope] = tool_envelopes(scripted_llm.requests(model)[1])
    assert envelope["data"] == "paid 120 to acme" and "amount" in envelope["warnings"][0]


async def test_approve_and_remember_from_the_page_runs_the_other_waiting_call(
    browser, loop_worker, scripted_llm, temporal_env
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(
        model,
        [
            reply.tool_calls(("pay", PAY, "c1"), ("pay", {"amount": 9, "to": "bob"}, "c2")),
            reply.text("Both paid."),
        ],
    )
    async with loop_worker(payments.registry()) as w:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        first = await w.sessions.send(sid, "pay both", message_id="m1")
        deps = ServiceDeps(sessions=w.sessions, tokens=TokenBook(TOKENS))
        async with live_service(deps) as base:
            page = await browser.new_page(viewport={"width": 1100, "height": 900})
            await page.goto(f"{base}/ui/approvals")
            await page.fill("#token", "alice-token-0001")
            await page.click("button:has-text('Sign in')")
            card = page.locator("[data-call-id='c1']")
            await card.wait_for()
            assert await page.inner_text("[data-testid=tool-call-count]") == "2"
            await card.locator("[data-testid=remember]").check()
            await card.locator("button[value=approve]").click()
            await page.locator("[data-testid=tool-call-outcome]").wait_for()
            assert await page.inner_text("[data-testid=tool-call-count]") == "0"
        final = await w.sessions.message_result(sid, first.message_id)
        listing = await w.sessions.tool_approvals(sid)
    assert final.reply == "Both paid." and sorted(a for a, _, _ in payments.made) == [9, 250]
    assert [(p.tool, p.approved_by) for p in listing.policies] == [("pay", "alice")]
