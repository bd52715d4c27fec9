"""The Markdown report: what it says besides the success table."""

from __future__ import annotations

from durable_loop.evals import metrics
from durable_loop.evals.report import build_summary, markdown
from durable_loop.evals.schema import RunRecord


def record(strategy: str, latency_ms: int, prompt: int, cached: int) -> RunRecord:
    return RunRecord(
        model="m",
        provider="openai",
        profile="catalog",
        strategy=strategy,
        scenario="multiple",
        trial=1,
        tool_scenario=True,
        ok=True,
        latency_ms=latency_ms,
        status="completed",
        session_id=f"s-{strategy}-{latency_ms}",
        prompt_tokens=prompt,
        cached_prompt_tokens=cached,
    )


def report(records: list[RunRecord]) -> str:
    summary = build_summary(
        records, mode="live", scenarios=["multiple"], trials=1, started_at="2026-11-28"
    )
    return markdown(records, summary)


def test_the_share_of_prompt_tokens_read_from_the_servers_cache_is_reported_per_variant():
    records = [
        record("baseline", 19000, 1000, 18),
        record("baseline", 21000, 1000, 2),
        record("production", 6000, 1200, 1100),
    ]
    text = report(records)
    assert "- m / catalog / baseline: 1% (20 of 2,000)" in text
    assert "- m / catalog / production: 92% (1,100 of 1,200)" in text
    [production] = [
        s
        for s in metrics.summaries(records, by_scenario=False, by_strategy=True)
        if s.strategy == "production"
    ]
    assert (production.prompt_tokens, production.cached_prompt_tokens) == (1200, 1100)


def test_no_cache_line_when_the_server_reported_none():
    assert "server's cache" not in report([record("baseline", 19000, 1000, 0)])
