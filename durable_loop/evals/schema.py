"""The report files' schema: one raw record per run, and the summaries built from them."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RunRecord(BaseModel):
    """One session run of one scenario (a line of runs.jsonl)."""

    model: str
    provider: str
    profile: str
    strategy: str
    fallback: bool = False
    scenario: str
    entry: str | None = Field(
        default=None, description="The suite entry the run ran (a BFCL entry id)"
    )
    trial: int
    tool_scenario: bool
    ok: bool
    failure: str | None = Field(default=None, description="ASSERTION_FAILED, NO_TOOL_CALLS, ...")
    problems: list[str] = Field(default_factory=list)
    latency_ms: int
    turns: int = 0
    tool_calls: int = 0
    status: str
    error_code: str | None = None
    session_id: str
    recoveries: list[str] = Field(
        default_factory=list, description="Named recoveries the run used (RunResult.recoveries)"
    )
    prompt_tokens: int = Field(
        default=0, description="Prompt tokens of the run's LLM turns (RunResult.usage)"
    )
    cached_prompt_tokens: int = Field(
        default=0,
        description="Of those, what the server read from its prompt cache: a run whose "
        "prompts a server has seen before is faster (docs/evals.md)",
    )


class Latency(BaseModel):
    p50_ms: float
    p95_ms: float


class Rate(BaseModel):
    runs: int
    ok: int
    success_rate: float


class GroupSummary(BaseModel):
    model: str
    profile: str
    strategy: str | None = None
    fallback: bool | None = None
    scenario: str | None = None
    overall: Rate
    tool_scenarios: Rate | None = None
    latency: Latency
    failures: dict[str, int] = Field(default_factory=dict)
    recoveries: dict[str, int] = Field(
        default_factory=dict, description="Named recovery -> how many times the runs used it"
    )
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0


class Summary(BaseModel):
    """summary.json: the whole run, then one row per model x profile."""

    started_at: str
    resumed_runs: int = Field(
        default=0,
        description="Of the runs, those an earlier invocation recorded (--resume); "
        "started_at is this invocation's",
    )
    mode: str = Field(description="offline or live")
    scenarios: list[str]
    trials: int
    overall: Rate
    tool_scenarios: Rate
    latency: Latency
    failures: dict[str, int]
    by_model: list[GroupSummary]
    recoveries: dict[str, int] = Field(default_factory=dict)
