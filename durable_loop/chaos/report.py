"""The chaos run as one typed report, and its plain-text rendering."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from durable_loop.chaos.checks import SessionCheck


class ScenarioResult(BaseModel):
    name: str
    description: str
    faults: dict[str, int] = Field(description="Fault kind -> how many were injected")
    sessions: list[str] = Field(default_factory=list)
    survived: int = Field(default=0, description="Sessions that ended as expected")
    expectation_failures: list[str] = Field(default_factory=list)
    checks: list[SessionCheck] = Field(default_factory=list)
    tool_invocations: int = 0
    side_effects: int = 0
    duplicates: int = 0
    details: dict[str, JsonValue] = Field(default_factory=dict)
    wall_s: float = 0.0
    error: str | None = Field(default=None, description="The scenario itself crashed")

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not self.expectation_failures
            and self.survived == len(self.sessions)
            and self.duplicates == 0
            and all(c.clean for c in self.checks)
        )


class ChaosReport(BaseModel):
    scenarios: list[ScenarioResult]
    faults_injected: int
    sessions: int
    sessions_survived: int
    duplicates: int
    tool_invocations: int
    side_effects: int
    half_written: int
    facts_without_confirmation: int
    replay_failures: int
    ok: bool
    wall_s: float

    @classmethod
    def of(cls, scenarios: list[ScenarioResult], wall_s: float) -> ChaosReport:
        checks = [c for s in scenarios for c in s.checks]
        return cls(
            scenarios=scenarios,
            faults_injected=sum(sum(s.faults.values()) for s in scenarios),
            sessions=sum(len(s.sessions) for s in scenarios),
            sessions_survived=sum(s.survived for s in scenarios),
            duplicates=sum(s.duplicates for s in scenarios),
            tool_invocations=sum(s.tool_invocations for s in scenarios),
            side_effects=sum(s.side_effects for s in scenarios),
            half_written=sum(len(c.half_written) for c in checks),
            facts_without_confirmation=sum(len(c.unconfirmed_facts) for c in checks),
            replay_failures=sum(len(c.replay_failures) for c in checks),
            ok=all(s.ok for s in scenarios),
            wall_s=round(wall_s, 1),
        )

    def lines(self) -> list[str]:
        out = [
            f"{'scenario':<28} {'faults':>6} {'sessions':>9} {'dup':>4} {'wall s':>7}  result",
        ]
        for s in self.scenarios:
            verdict = "ok" if s.ok else "FAILED"
            survived = f"{s.survived}/{len(s.sessions)}"
            out.append(
                f"{s.name:<28} {sum(s.faults.values()):>6} {survived:>9} "
                f"{s.duplicates:>4} {s.wall_s:>7.1f}  {verdict}"
            )
            for problem in problems_of(s):
                out.append(f"    - {problem}")
        out += [
            "",
            f"faults injected:            {self.faults_injected}",
            f"sessions survived:          {self.sessions_survived}/{self.sessions}",
            f"duplicates observed:        {self.duplicates} (a side effect applied twice for "
            "one tool call; must be 0)",
            f"side-effecting tool invocations / effects applied: {self.tool_invocations} / "
            f"{self.side_effects} (a re-invocation after a crash reuses its idempotency key)",
            f"half-written store rows:    {self.half_written}",
            f"facts without confirmation: {self.facts_without_confirmation}",
            f"histories not replaying:    {self.replay_failures}",
            f"verdict:                    {'PASS' if self.ok else 'FAIL'} in {self.wall_s:.0f}s",
        ]
        return out


def problems_of(result: ScenarioResult) -> list[str]:
    problems = list(result.expectation_failures)
    if result.error:
        problems.append(f"scenario error: {result.error}")
    for check in result.checks:
        for kind, items in (
            ("half-written", check.half_written),
            ("facts", check.unconfirmed_facts),
            ("replay", check.replay_failures),
        ):
            problems.extend(f"{check.session_id}: {kind}: {item}" for item in items)
    return problems
