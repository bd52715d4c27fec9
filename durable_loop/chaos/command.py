"""``durable-loop chaos``: inject faults into real processes and report what survived.

It starts its own dev server (SQLite in a temp dir), a ``durable-loop worker`` subprocess
and a scripted LLM endpoint, so it needs nothing running and touches nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def chaos(
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            help="Run only this scenario (repeatable). Default: all; see --list.",
            show_default=False,
        ),
    ] = None,
    list_only: Annotated[bool, typer.Option("--list", help="List the scenarios and exit.")] = False,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", help="Also write the report as JSON to this file.", dir_okay=False),
    ] = None,
    db_url: Annotated[
        str | None,
        typer.Option(
            "--db-url",
            help="Store for the worker and the checks (default: SQLite in a temp dir), "
            "e.g. postgresql://user:pw@host/db.",
            show_default=False,
        ),
    ] = None,
    load_sessions: Annotated[
        int,
        typer.Option(
            "--load-sessions",
            min=1,
            help="Sessions in flight in the load scenarios (many_workers_kill, rolling_upgrade).",
        ),
    ] = 300,
    sticky_timeout_s: Annotated[
        float | None,
        typer.Option(
            "--sticky-timeout-s",
            min=0.1,
            help="The extra workers' sticky timeout in many_workers_kill (default: the "
            "SDK's 10 s): how long the killed worker's sessions wait on its queue.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Kill the worker mid-LLM-call and mid-tool, restart the server, send messages while no
    worker runs, kill one of three workers under load, script 429/500/529/resets/timeouts/
    truncated JSON and hostile tools; then check every session: it ended correctly, no side
    effect ran twice, no fact changed without confirmation, nothing half-written, histories
    replay. Exit code 1 on any failure."""
    import asyncio

    from durable_loop.chaos.run import UnknownScenario, run_chaos, select
    from durable_loop.chaos.scenario import SCENARIOS

    if list_only:
        for name, (description, _) in SCENARIOS.items():
            typer.echo(f"{name:<28} {description}")
        return
    try:
        select(scenario)
    except UnknownScenario as err:
        raise typer.BadParameter(str(err), param_hint="--scenario") from None
    report = asyncio.run(
        run_chaos(
            scenario,
            db_url=db_url,
            load_sessions=load_sessions,
            sticky_timeout_s=sticky_timeout_s,
        )
    )
    for line in report.lines():
        typer.echo(line)
    if json_path is not None:
        json_path.write_text(report.model_dump_json(indent=2) + "\n")
        typer.echo(f"report written to {json_path}")
    if not report.ok:
        raise typer.Exit(1)
