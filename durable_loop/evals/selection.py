"""Scenario registry, presets and the comma-list selection syntax."""

from __future__ import annotations

from durable_loop.cli.codes import CliCode
from durable_loop.cli.errors import CliError
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.scenarios_approvals import APPROVALS
from durable_loop.evals.scenarios_core import CORE
from durable_loop.evals.scenarios_everyday import EVERYDAY
from durable_loop.evals.scenarios_recovery import RECOVERY
from durable_loop.evals.scenarios_typed import TYPED

SCENARIOS: dict[str, Scenario] = {s.name: s for s in (*CORE, *RECOVERY, *TYPED)}
GATED: dict[str, Scenario] = {s.name: s for s in APPROVALS}
"""Scenarios with a scripted approver: selected by name, outside the presets (the
model-quirk behaviours are measured on the scenarios above)."""
EVERYDAY_SCENARIOS: dict[str, Scenario] = {s.name: s for s in EVERYDAY}
"""Ordinary calculator and notebook requests (preset ``everyday``), outside ``all``."""
SMOKE = (
    "happy_path",
    "missing_workspace_id",
    "type_error_recovery",
    "long_arguments_guard",
    "chat_only",
)
PRESETS: dict[str, tuple[str, ...]] = {
    "smoke": SMOKE,
    "default": SMOKE,
    "typical": (*SMOKE, "happy_path_parallel", "tool_error_recovery"),
    "extreme": (
        "long_arguments_guard",
        "type_error_recovery",
        "unknown_tool_recovery",
        "invalid_json_recovery",
        "empty_final_recovery",
        "tool_error_recovery",
    ),
    "all": tuple(SCENARIOS),
    "everyday": tuple(EVERYDAY_SCENARIOS),
}
NAMED: dict[str, Scenario] = {**SCENARIOS, **GATED, **EVERYDAY_SCENARIOS}


def select_scenarios(spec: str | None) -> list[Scenario]:
    """``smoke`` / ``all`` / ``default,happy_path_parallel`` / ``happy_path,chat_only``;
    empty means the smoke preset. Order is kept, duplicates dropped."""
    names: list[str] = []
    for part in (spec or "smoke").split(","):
        part = part.strip()
        if not part:
            continue
        if part in PRESETS:
            names.extend(PRESETS[part])
        elif part in NAMED:
            names.append(part)
        else:
            raise CliError(
                CliCode.UNKNOWN_SCENARIO,
                f"unknown scenario or preset {part!r}; presets: {', '.join(PRESETS)}; "
                f"scenarios: {', '.join(NAMED)}",
            )
    if not names:
        names = list(SMOKE)
    return [NAMED[n] for n in dict.fromkeys(names)]
