"""One session that uses every feature at once (tests/whole/session.py drives it), read
back through every inspector: each must answer without error and agree with the
RunResults; every run of the session and of its sub-agent replays."""

from __future__ import annotations

import json
import re
from collections import Counter

from durable_loop.client.trace.models import Trace
from durable_loop.client.workspace import WorkspaceView
from durable_loop.core.contracts import RunResult
from durable_loop.core.errors import ErrorCode
from durable_loop.testing.history import replay_failures
from tests.whole.agree import (
    counted,
    lines_naming,
    outcomes,
    shows_decision,
    shows_values,
    squashed,
    statuses,
    total_tokens,
)
from tests.whole.conftest import Whole
from tests.whole.session import BUDGET_AFTER, TITLE, Decided
from tests.whole.story import CHILD_USAGE, DELEGATE, EXPIRES, FALLBACK, PAY, STORY


def results(whole: Whole) -> list[RunResult]:
    return list(whole.drive.results.values())


def trace_of(whole: Whole, key: str = "trace --json") -> Trace:
    printed = whole.seen.cli[key]
    assert printed.exit_code == 0, printed.output
    return Trace.model_validate_json(printed.stdout)


def said_by(decided: Decided) -> str:
    """What a line about a decision must say: the person, or (an expiry) what happened."""
    return decided.status if decided.who.startswith("system:") else decided.who


def others(whole: Whole) -> set[str]:
    return {d.target for d in whole.drive.decided} | set(outcomes(results(whole)))


def test_every_message_ended_as_the_story_says(whole: Whole):
    """The RunResults the inspectors are checked against (and nothing left unscripted)."""
    done, play = whole.drive, whole.rig.play
    assert play.unscripted == []
    ended = {mid: (r.status, r.error.code if r.error else None) for mid, r in done.results.items()}
    assert ended == {
        "m1-pay": ("completed", None),
        "m2-over": ("failed", ErrorCode.BUDGET_EXCEEDED),
        "m3-propose": ("completed", None),
        "m4-typed": ("completed", None),
        "m5-fallback": ("completed", None),
        "m6-cancelled": ("cancelled", ErrorCode.MESSAGE_CANCELLED),
        "m7-interrupted": ("cancelled", ErrorCode.MESSAGE_CANCELLED),
        "m8-steered": ("completed", None),
        "m9-delegate": ("completed", None),
        "m10-expires": ("completed", None),
    }
    assert outcomes(results(whole)) == {
        "c0": ("lookup", True, [], True),
        "c1": ("pay", True, [], True),
        "c2": ("pay", True, [], True),
        "c3": ("pay", False, [ErrorCode.TOOL_CALL_REJECTED], False),
        "p1": ("facts_propose", True, [], True),
        "r1": ("researcher", True, [], True),
        "c10": ("pay", False, [ErrorCode.TOOL_CALL_EXPIRED], False),
    }
    made = sorted((to, amount) for amount, to, _ in whole.rig.payments.made)
    assert made == [("acme", 5), ("acme", 250), ("bob", 80)]
    assert done.results["m4-typed"].output == {"city": "Paris", "population": 2100000}
    [fell_back] = done.results[FALLBACK.message_id].fallbacks
    assert (fell_back.failed_model, fell_back.error.code) == (whole.rig.models.primary, "HTTP_503")
    assert done.results[FALLBACK.message_id].model == whole.rig.models.backup
    child_tokens = 2 * CHILD_USAGE["total_tokens"]
    assert done.results[DELEGATE.message_id].usage.total_tokens == 2 * 15 + child_tokens
    assert done.budget is not None and done.budget.budget.max_session_tokens == BUDGET_AFTER
    assert [(d.target, d.who, d.status) for d in done.decided] == [
        ("c1", "alice", "confirmed"),
        ("c2", "alice", "confirmed"),
        ("c3", "bob", "rejected"),
        (done.proposal_id, "alice", "committed"),
        ("c9", "alice", "confirmed"),
        ("c10", "system:expiry", "expired"),
    ]


def test_a_message_waiting_for_a_person_answers_with_what_waits(whole: Whole):
    """send answers awaiting_approval with the held calls, also when they are held by a
    sub-agent (docs/sub-agents.md, issue 27 section 5)."""
    interim = whole.drive.interim
    waiting = {
        mid: (r.status, [(p.call_id, p.session_id) for p in r.pending_approvals])
        for mid, r in interim.items()
    }
    sid, child = whole.drive.session_id, whole.drive.child_id
    assert waiting == {
        PAY.message_id: ("awaiting_approval", [("c1", sid), ("c2", sid), ("c3", sid)]),
        DELEGATE.message_id: ("awaiting_approval", [("c9", child)]),
        EXPIRES.message_id: ("awaiting_approval", [("c10", sid)]),
    }
    assert whole.drive.states == {
        "tool calls": "awaiting_approval",
        "sub-agent": "awaiting_approval",
    }
    # the Web UI's DurableLoopPendingProposals > 0 finds it (where the server has visibility)
    assert whole.drive.found_waiting in (None, True)


def test_the_session_queries_agree(whole: Whole):
    seen, done = whole.seen, whole.drive
    assert seen.status.messages_done == len(STORY)
    assert seen.status.usage.total_tokens == total_tokens(results(whole))
    assert seen.status.budget is not None
    assert seen.status.budget.max_session_tokens == BUDGET_AFTER
    assert seen.child_status.usage.total_tokens == 2 * CHILD_USAGE["total_tokens"]
    assert seen.child_status.state == "closed"  # the sub-agent's workflow has ended
    assert seen.listing.pending == [] and seen.proposals.pending == []
    decided = {(d.call_id, d.decided_by, d.status) for d in seen.listing.decided}
    wanted = {(d.target, d.who, d.status) for d in done.decided if d.kind == "tool call"}
    assert decided == wanted
    [proposal] = seen.proposals.decided
    assert (proposal.proposal_id, proposal.status, proposal.decided_by) == (
        done.proposal_id,
        "committed",
        "alice",
    )


def test_the_trace_json_agrees_with_the_results(whole: Whole):
    trace = trace_of(whole)
    ran = results(whole)
    assert [m.message_id for m in trace.by_message] == list(whole.drive.results)
    assert Counter(m.status for m in trace.by_message) == statuses(ran)
    assert [m.session_turns for m in trace.by_message] == [r.session_turns for r in ran]
    corrected = {m.message_id: m.output_corrections for m in trace.by_message}
    assert corrected["m4-typed"] == whole.drive.results["m4-typed"].output_corrections == 1
    assert trace.usage.total_tokens == total_tokens(ran)  # the sub-agent's tokens too
    assert [t.turn for t in trace.turns if t.pending] == []  # every message has ended
    calls = {
        c.call_id: (c.name, c.ok, sorted(c.error_codes), c.executed)
        for t in trace.turns
        for c in t.calls
    }
    assert calls == outcomes(ran)
    [delegated] = [c for t in trace.turns for c in t.calls if c.call_id == "r1"]
    assert delegated.sub_agent_session == whole.drive.child_id
    by_turn = {t.turn: t for t in trace.turns}
    for result in ran:
        for record in result.fallbacks:
            tried = [(a.model, a.attempts == 0, a.error) for a in by_turn[record.turn].attempts]
            models = [model for model, _, _ in tried]
            assert models[-1] == result.model or record.next_model in models, (record, tried)
            [(_, skipped, error)] = [t for t in tried if t[0] == record.failed_model]
            assert skipped == record.skipped and error is not None
            assert error.code == record.error.code


def test_the_trace_json_shows_each_decision_and_the_budget_change(whole: Whole):
    """Who decided what, read from the Updates (issue 27 section 2: decode each Update by
    its name); the sub-agent's call is decided through the parent."""
    printed = whole.seen.cli["trace --json"]
    assert printed.exit_code == 0, printed.output
    tree = json.loads(printed.stdout)
    child = json.loads(whole.seen.cli["child trace --json"].stdout or "{}")
    missing = [
        (d.target, d.who, d.status)
        for d in whole.drive.decided
        if not shows_decision(tree, d, others(whole)) and not shows_decision(child, d, set())
    ]
    assert missing == []
    assert shows_values(tree, "ops", BUDGET_AFTER), "the budget change is not in the trace"


def test_the_trace_table_agrees_with_the_results(whole: Whole):
    printed = whole.seen.cli["trace"]
    assert printed.exit_code == 0, printed.output
    text, ran = printed.stdout, results(whole)
    for status, count in statuses(ran).items():
        assert counted(text, count, status), (status, count)
    assert re.search(rf"tokens:?\s*{total_tokens(ran)}\b", text), "the session's tokens"
    for reply in (r.reply for r in ran if r.reply):
        assert squashed(reply) in squashed(text), reply
    for call_id, (_, _, _, executed) in outcomes(ran).items():
        assert lines_naming(text, call_id), call_id
        if executed:
            assert not any("not run" in line for line in lines_naming(text, call_id)), call_id
    for decided in whole.drive.decided:  # who decided, on the line of what they decided
        said = said_by(decided)
        assert any(said in line for line in lines_naming(text, decided.target)), decided
    assert whole.drive.child_id in text
    assert "typed answer after 1 correction(s)" in text


def test_the_service_trace_is_the_cli_trace(whole: Whole):
    answered = whole.seen.api["trace"]
    assert answered.status_code == 200, answered.text
    served = Trace.model_validate(answered.json())
    assert served == trace_of(whole).model_copy(update={"ui_url": served.ui_url})


def test_the_sub_agent_trace_agrees_with_its_result(whole: Whole):
    child = trace_of(whole, "child trace --json")
    status = whole.seen.child_status
    assert status.last_result is not None
    assert [(m.message_id, m.status) for m in child.by_message] == [
        (status.last_result.message_id, status.last_result.status)
    ]
    assert child.usage.total_tokens == status.usage.total_tokens
    calls = [(c.call_id, c.ok, c.executed) for t in child.turns for c in t.calls]
    assert calls == [("c9", True, True)]
    answered = whole.seen.api["child trace"]
    assert answered.status_code == 200 and Trace.model_validate(answered.json()) == child


def test_the_workspace_shows_facts_and_who_decided(whole: Whole):
    printed = whole.seen.cli["workspace --json"]
    assert printed.exit_code == 0, printed.output
    view = WorkspaceView.model_validate_json(printed.stdout)
    assert view.facts == {"title": "New"} and view.facts_version == 1
    tool_rows = {(a.call_id, a.actor, a.op) for a in view.audit if a.target == "tool"}
    ops = {"confirmed": "confirm", "rejected": "reject", "expired": "expire"}
    assert tool_rows == {
        (d.target, d.who, "edit" if d.edited_fields else ops[d.status])
        for d in whole.drive.decided
        if d.kind == "tool call"
    }
    [budget] = [a for a in view.audit if a.target == "budget"]
    assert (budget.actor, budget.path, budget.value) == ("ops", "/max_session_tokens", BUDGET_AFTER)
    [fact] = [a for a in view.audit if a.target == "facts"]
    assert (fact.actor, fact.path, fact.proposal_id) == ("alice", "/title", whole.drive.proposal_id)
    answered = whole.seen.api["workspace"]
    assert answered.status_code == 200 and WorkspaceView.model_validate(answered.json()) == view


def test_who_approved_each_payment_is_readable_without_json(whole: Whole):
    """The workspace table and page name, for each decided call, the call and the person
    (issue 27 section 2: "Who approved this payment?" without --json)."""
    table = whole.seen.cli["workspace"]
    assert table.exit_code == 0, table.output
    page = whole.seen.api["workspace page"]
    assert page.status_code == 200, page.text
    for shown in (table.stdout, page.text):
        for decided in (d for d in whole.drive.decided if d.kind == "tool call"):
            said = said_by(decided)
            assert any(said in line for line in lines_naming(shown, decided.target)), decided


def test_the_result_command_and_endpoint_answer_the_final_result(whole: Whole):
    final = whole.drive.results[PAY.message_id]
    printed = whole.seen.cli["result"]
    assert printed.exit_code == 0, printed.output
    assert final.reply is not None and final.reply in printed.stdout
    answered = whole.seen.api["result"]
    assert answered.status_code == 200 and RunResult.model_validate(answered.json()) == final


def test_the_approval_page_listed_what_waited(whole: Whole):
    pages, held = whole.drive.pages, whole.drive.held

    def listed(html: str) -> list[str]:
        return re.findall(r'data-(?:call|proposal)-id="([^"]+)"', html)

    assert listed(pages["tool calls"]) == [p.call_id for p in held["tool calls"].pending]
    assert listed(pages["proposal"]) == [whole.drive.proposal_id]
    assert listed(pages["sub-agent"]) == ["c9"] == [p.call_id for p in held["sub-agent"].pending]
    assert whole.drive.child_id in pages["sub-agent"]
    assert listed(whole.seen.page_after) == []


def test_the_web_ui_memo_names_the_session_and_the_sub_agent(whole: Whole):
    sid, child = whole.drive.session_id, whole.drive.child_id
    described = whole.seen.described
    assert described[sid].memo == {"session_id": sid, "title": TITLE}
    assert {k: described[child].memo.get(k) for k in ("session_id", "parent_session_id")} == {
        "session_id": child,
        "parent_session_id": sid,
    }
    assert described[child].memo.get("sub_agent") == "researcher"
    assert child in (described[child].static_summary or "")


async def test_every_run_of_the_session_and_its_sub_agent_replays(whole: Whole):
    histories = [h for runs in whole.seen.histories.values() for h in runs]
    assert len(histories) >= 2
    converter = whole.rig.sessions.client.data_converter
    assert await replay_failures(histories, data_converter=converter) == {}
