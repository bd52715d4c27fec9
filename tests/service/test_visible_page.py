"""The approval and workspace pages show hidden characters as escapes (issue 28): the
model's U+202E in a ``to`` field reads ``\\u202e`` instead of reversing what follows, an
approver's CR/LF reads ``\\r\\n``; HTML autoescaping stays on. The editable arguments are
the escaped JSON, which parses back to the model's arguments, so leaving them alone
approves the call as the model made it."""

from __future__ import annotations

import html
import json
import re
import unicodedata
from datetime import UTC, datetime, timedelta

from pydantic import JsonValue

from durable_loop.client.workspace import AuditLine, WorkspaceView, document_rows
from durable_loop.client.workspace_decisions import decision_lines
from durable_loop.core.approval_models import PendingToolCall, ToolCallDecided
from durable_loop.core.proposals import DecisionResult, PendingProposal
from durable_loop.core.visible_text import visible_json
from durable_loop.service.auth import COOKIE
from durable_loop.service.diff import DiffLine, FactsDiff, json_diff
from durable_loop.service.models import PendingItem, PendingListing, PendingToolCallItem
from durable_loop.service.pages import templates
from durable_loop.testing import reply
from tests.conftest import unique
from tests.workflows.approval_kit import Payments, approval_settings

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
FORGED = "alice\r\nFAKE-LINE: approved by root"
SPOOFED: dict[str, JsonValue] = {"amount": 250, "to": "acme\u202e1337"}


def render(name: str, **context: object) -> str:
    """A template as the app renders it (its filters, autoescaping), without a request."""
    return templates.env.get_template(name).render(
        url_for=lambda *_, **__: "/static/style.css", **context
    )


def hidden_in(page: str) -> set[str]:
    """Raw control, bidi and other invisible characters in what the page shows: its text
    (tags aside: a hidden input or data attribute keeps the real id), its own layout
    newlines aside."""
    shown = html.unescape(re.sub(r"<[^>]*>", "", page))
    return {
        f"U+{ord(c):04X}"
        for c in shown
        if c != "\n" and unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp", "Cs"}
    }


def held(call_id: str = "c1", tool: str = "pay", arguments: dict | None = None) -> PendingToolCall:
    return PendingToolCall.model_validate(
        {
            "call_id": call_id,
            "tool": tool,
            "arguments": arguments if arguments is not None else SPOOFED,
            "fingerprint": "f" * 64,
            "session_id": "s1",
            "message_id": "m1",
            "turn": 1,
            "assistant_seq": 2,
            "call_index": 0,
            "result_seq": 3,
            "created_at": NOW,
            "expires_at": NOW + timedelta(hours=1),
        }
    )


def listing(call: PendingToolCall) -> PendingListing:
    proposal = PendingProposal(
        proposal_id="p1",
        workspace_id="w1",
        changes=[{"op": "replace", "path": "/to\u2066", "value": "acme\u202e"}],
        fingerprint="e" * 64,
        paths=["/to\u2066"],
        summary="retitle\r\nFAKE-LINE: approved by root",
        session_id="s1",
        turn=1,
        call_id="c9",
        created_at=NOW,
        expires_at=NOW + timedelta(hours=1),
    )
    diff = FactsDiff(
        before={}, lines=[DiffLine(kind="added", text='  "to": "acme\u202e1337\u2028x"')]
    )
    return PendingListing(
        items=[PendingItem(session_id="s1", title="Pay\u202eday", proposal=proposal, diff=diff)],
        tool_calls=[PendingToolCallItem(session_id="s1", call=call, arguments_pretty="")],
        source="registry",
    )


def test_the_approval_page_shows_escapes_for_every_hidden_character():
    call = held(
        tool="pay\u202e",
        arguments={**SPOOFED, "memo": "a\nb\x07\x85", "city": "東京 café 🎉"},
    )
    page = render(
        "approvals.html",
        identity="alice",
        listing=listing(call),
        outcome=DecisionResult(
            proposal_id="p0",
            status="rejected",
            decided_by=FORGED,
            comment="\u202eok",
            decided_at=NOW,
        ),
        call_outcome=ToolCallDecided(
            call_id="c0",
            tool="pay\u200b",
            message_id="m1",
            status="confirmed",
            decided_by=FORGED,
            fingerprint="f" * 64,
            comment="fine\u2067 <b>",
            edited_fields=["to\u202e"],
            decided_at=NOW,
        ),
        outcome_session="s1",
        error={"code": "NOT_PENDING", "message": "no call c1\u202e\nFAKE-LINE: x"},
    )
    assert hidden_in(page) == set()
    text = html.unescape(page)
    assert "Proposal <code>p0</code> of session <code>s1</code>" in text
    assert f"was <strong>rejected by {FORGED.encode('unicode_escape').decode()}</strong>" in text
    assert "Comment: “\\u202eok”" in text
    assert "(<code>pay\\u200b</code>)" in text
    assert "by alice\\r\\nFAKE-LINE: approved by root with edited to\\u202e." in text
    assert "Comment: “fine\\u2067 <b>”" in text and "<b>" not in page  # still autoescaped
    assert "no call c1\\u202e\\nFAKE-LINE: x" in text
    assert "<h2>retitle\\r\\nFAKE-LINE: approved by root</h2>" in text
    assert "Session <strong>Pay\\u202eday</strong>" in text
    assert '"to": "acme\\u202e1337\\u2028x"' in text  # the facts diff's line
    assert "replace /to\\u2066" in text
    assert "<h2><code>pay\\u202e</code></h2>" in text
    arguments = text.split('data-testid="arguments">')[1].split("</pre>")[0]
    assert '"to": "acme\\u202e1337"' in arguments
    assert '"memo": "a\\nb\\u0007\\u0085"' in arguments
    assert '"city": "東京 café 🎉"' in arguments  # ordinary text stays as it is


def test_an_escaped_call_id_is_shown_escaped_and_posted_as_it_is():
    page = render(
        "tool_calls.html",
        listing=PendingListing(
            items=[],
            tool_calls=[
                PendingToolCallItem(session_id="s1", call=held("c1\u202e"), arguments_pretty="")
            ],
            source="registry",
        ),
    )
    assert "· call <code>c1\\u202e</code>" in page
    # the form names the real call: what a person sees is escaped, what is sent is not
    assert '<input type="hidden" name="call_id" value="c1\u202e">' in page


def test_the_edit_page_shows_escapes_and_keeps_the_edited_value():
    original: dict[str, JsonValue] = {**SPOOFED, "memo": "x\u2066"}
    edited: dict[str, JsonValue] = {**original, "amount": 200}
    page = render(
        "tool_call_edit.html",
        identity="alice",
        session_id="s1",
        call=held(tool="pay\n", arguments=original),
        diff=json_diff(original, edited),
        arguments=visible_json(edited),
        comment="",
    )
    assert hidden_in(page) == set()
    text = html.unescape(page)
    assert "Approve <code>pay\\n</code> with edited arguments?" in text
    diff = text.split('data-testid="edit-diff">')[1].split("</pre>")[0]
    assert '"to": "acme\\u202e1337"' in diff and '"memo": "x\\u2066"' in diff
    sent = re.search(r'name="arguments" value="([^"]*)"', page)
    assert sent is not None and json.loads(html.unescape(sent.group(1))) == edited


def test_the_workspace_page_shows_escapes():
    view = WorkspaceView(
        workspace_id="w1",
        session_id="s1",
        exists=True,
        facts={"to\u202e": "acme\u202e"},
        locks=["/to\u2066"],
        audit=[
            AuditLine(
                workspace_id="w1",
                version=1,
                target="tool",
                op="confirm",
                path="pay\u200b",
                actor=FORGED,
                actor_kind="human",
                session_id="s1",
                turn=1,
                call_id="c1\u202e",
                comment="ok\u202e\nFAKE-LINE: comment",
                arguments='{"to": "acme\u202e1337"}',
                created_at=NOW,
            )
        ],
    )
    page = render(
        "workspace.html",
        identity="alice",
        session_id="s1",
        view=view,
        facts=document_rows(view.facts, view.locks),
        draft=document_rows(view.draft, view.locks),
        decisions=decision_lines(view),
    )
    assert hidden_in(page) == set()
    text = html.unescape(page)
    assert "<code>/to\\u202e</code>" in text and "<code>/to\\u2066</code>" in text
    assert "alice\\r\\nFAKE-LINE: approved by root approved tool call c1\\u202e" in text
    assert '<code>{"to": "acme\\u202e1337"}</code>' in text
    assert "<td>ok\\u202e\\nFAKE-LINE: comment</td>" in text
    assert "<td>alice\\r\\nFAKE-LINE: approved by root <span" in text


def _textarea(page: str, call_id: str) -> str:
    found = re.search(
        rf'<textarea id="arguments-{call_id}" name="arguments"[^>]*>(.*?)</textarea>', page, re.S
    )
    assert found is not None, page
    return html.unescape(found.group(1))


async def test_the_shown_arguments_round_trip_to_the_models(
    loop_worker, scripted_llm, temporal_env, service
):
    payments = Payments()
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.tool_calls(("pay", SPOOFED, "c1")), reply.text("Paid.")])
    async with loop_worker(payments.registry()) as w, service(w) as http:
        await w.sessions.start(sid, approval_settings(scripted_llm, model, temporal_env))
        await w.sessions.send(sid, "pay")
        [call] = (await w.sessions.tool_approvals(sid)).pending
        http.cookies.set(COOKIE, "alice-token-0001")
        page = await http.get("/ui/approvals")
        shown = _textarea(page.text, "c1")
        form = {"session_id": sid, "call_id": "c1", "fingerprint": call.fingerprint}
        edit = shown.replace('"amount": 250', '"amount": 200')
        preview = await http.post(
            "/ui/tool-call", data={**form, "verdict": "approve", "arguments": edit}
        )
        posted = await http.post(
            "/ui/tool-call", data={**form, "verdict": "approve", "arguments": shown}
        )
        after = await http.get(posted.headers["location"])
        [decided] = (await w.sessions.tool_approvals(sid)).decided
    card = page.text.split('data-call-id="c1"')[1].split("</article>")[0]
    assert hidden_in(card) == set()
    assert '"to": "acme\\u202e1337"' in shown and "\u202e" not in shown
    assert json.loads(shown) == SPOOFED  # the escape means the same character
    # an edit is previewed as a diff that shows the escape too, and keeps the value
    assert preview.status_code == 200 and hidden_in(preview.text) == set()
    assert "acme\\u202e1337" in html.unescape(preview.text)
    sent = re.search(r'name="arguments" value="([^"]*)"', preview.text)
    assert sent is not None and json.loads(html.unescape(sent.group(1))) == {
        **SPOOFED,
        "amount": 200,
    }
    # left alone, the shown arguments are the model's: approved as it asked, no edits
    assert posted.status_code == 303, posted.text
    assert decided.status == "confirmed" and decided.edited_fields == []
    assert "was <strong>approved</strong> by alice." in " ".join(after.text.split())
    assert [(a, to) for a, to, _ in payments.made] == [(250, "acme\u202e1337")]
