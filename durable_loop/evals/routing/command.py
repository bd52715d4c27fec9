"""``durable-loop route-bench``: the routing benchmark, offline or against a live endpoint.

Offline (default) a scripted behaviour answers over real local HTTP; with ``--base-url``
any OpenAI-compatible server is measured (e.g. ``durable-loop local-llm`` on :8080).
The report is saved as JSON per model and summarised on stdout.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.evals.codes import EvalCode

if TYPE_CHECKING:
    from collections.abc import Callable

    from durable_loop.evals.routing.report import BenchReport, QueryOutcome
    from durable_loop.testing import ScriptedLLM

DEFAULT_QUERIES = Path("evals/routing/queries.toml")
DEFAULT_OUT = Path("bench/results")


def route_bench(
    queries: Annotated[
        Path, typer.Option("--queries", help="Labelled query set (TOML).")
    ] = DEFAULT_QUERIES,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible server, e.g. http://127.0.0.1:8080. Omit to run offline.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model name sent to the server.")
    ] = None,
    provider: Annotated[str, typer.Option("--provider", help="Provider adapter.")] = "openai",
    api_key_env: Annotated[
        str | None,
        typer.Option("--api-key-env", help="Variable holding the API key.", show_default=False),
    ] = None,
    scripted: Annotated[
        str, typer.Option("--scripted", help="Offline behaviour: keyword, messy or guessing.")
    ] = "keyword",
    out: Annotated[Path, typer.Option("--out", help="Directory for the JSON report.")] = (
        DEFAULT_OUT
    ),
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N queries.", show_default=False)
    ] = None,
    repair_attempts: Annotated[int, typer.Option("--repair-attempts", min=0, max=3)] = 1,
    json_mode: Annotated[
        bool, typer.Option("--json-mode", help='Send response_format "json_object".')
    ] = False,
    timeout_s: Annotated[float, typer.Option("--timeout", help="Per request, seconds.")] = 120.0,
    route_only: Annotated[
        bool, typer.Option("--route-only", help="Skip the executor step: measure routing alone.")
    ] = False,
    suffix: Annotated[
        str,
        typer.Option(
            "--suffix", help="Appended to the report's name: routing_<model><suffix>.json."
        ),
    ] = "",
) -> None:
    """Measure routing: JSON and schema validity, accuracy, clarify rate, latency."""
    from durable_loop.evals.routing.report import save_report

    report = asyncio.run(
        _run(
            queries,
            base_url=base_url,
            model=model,
            provider=provider,
            api_key_env=api_key_env,
            scripted=scripted,
            limit=limit,
            repair_attempts=repair_attempts,
            json_mode=json_mode,
            timeout_s=timeout_s,
            route_only=route_only,
        )
    )
    path = save_report(report, out, suffix)
    _print(report)
    typer.echo(f"report: {path}")


async def _run(
    queries: Path,
    *,
    base_url: str | None,
    model: str | None,
    provider: str,
    api_key_env: str | None,
    scripted: str,
    limit: int | None,
    repair_attempts: int,
    json_mode: bool,
    timeout_s: float,
    route_only: bool = False,
) -> BenchReport:
    from durable_loop.cli.errors import CliError
    from durable_loop.core.config import RouterConfig
    from durable_loop.core.endpoint import LlmEndpoint
    from durable_loop.core.retry import RetrySettings
    from durable_loop.evals.routing.bench import RoutingBench, load_queries
    from durable_loop.evals.routing.bench_tools import travel_desk
    from durable_loop.worker.builder import new_http_client

    specs = travel_desk().specs()
    labelled = load_queries(queries, [s.name for s in specs])[:limit]
    router = RouterConfig(repair_attempts=repair_attempts, json_mode=json_mode)
    server: ScriptedLLM | None = None
    if base_url is None:
        server = _offline_server(scripted)
        model, base_url = _offline_model(scripted), server.base_url
    elif not model:
        raise CliError(EvalCode.MISSING_MODEL, "--model is required with --base-url")
    endpoint = LlmEndpoint(
        provider=provider,
        model=str(model),
        base_url=base_url,
        api_key_env=api_key_env,
        timeout_s=timeout_s,
        retry=RetrySettings(maximum_attempts=1),
    )
    http = new_http_client()
    try:
        bench = RoutingBench(
            http, endpoint, specs, router=router, environ=dict(os.environ), route_only=route_only
        )
        behaviour = "live" if server is None else scripted
        return await bench.run(
            labelled,
            behaviour=behaviour,
            queries_file=str(queries),
            progress=_progress_printer(len(labelled)),
        )
    finally:
        await http.aclose()
        if server is not None:
            server.stop()


def _offline_model(scripted: str) -> str:
    return f"scripted-{scripted}"


def _offline_server(scripted: str) -> ScriptedLLM:
    """A started scripted endpoint that answers the offline model with ``scripted``."""
    from durable_loop.cli.errors import CliError
    from durable_loop.evals.routing.scripted_models import BEHAVIOURS
    from durable_loop.testing import ScriptedLLM

    if scripted not in BEHAVIOURS:
        raise CliError(
            EvalCode.UNKNOWN_BEHAVIOUR, f"--scripted must be one of {sorted(BEHAVIOURS)}"
        )
    server = ScriptedLLM().start()
    server.script(_offline_model(scripted), [], then=BEHAVIOURS[scripted])
    return server


def _progress_printer(total: int) -> Callable[[int, QueryOutcome], None]:
    """One stderr line per query as it is measured."""

    def progress(done: int, outcome: QueryOutcome) -> None:
        mark = "ok " if outcome.correct else "MISS"
        route = f"{outcome.choice} {outcome.tool or ''}".strip()
        typer.echo(
            f"[{done}/{total}] {mark} {outcome.id}: {route}"
            f" ({outcome.router_ms} + {outcome.executor_ms} ms)",
            err=True,
        )

    return progress


def _print(report: BenchReport) -> None:
    m = report.metrics
    typer.echo(f"model {report.model} ({report.behaviour}), {m.queries} queries")
    rows = [
        ("JSON validity", m.json_validity),
        ("strict JSON", m.strict_json_rate),
        ("router schema validity", m.router_schema_validity),
        ("args schema validity", m.args_schema_validity),
        ("strict accuracy", m.strict_accuracy),
        ("acceptable accuracy", m.acceptable_accuracy),
        ("args accuracy", m.args_accuracy),
        ("clarify rate", m.clarify_rate),
        ("clarify precision", m.clarify_precision),
        ("clarify recall", m.clarify_recall),
        ("repair rate", m.repair_rate),
        ("failure rate", m.failure_rate),
    ]
    for label, value in rows:
        typer.echo(f"  {label:<24} {'n/a' if value is None else f'{value:.1%}'}")
    typer.echo(
        f"  {'router ms p50/p95':<24} {m.router_ms.p50:.0f} / {m.router_ms.p95:.0f}"
        f"   executor ms p50/p95 {m.executor_ms.p50:.0f} / {m.executor_ms.p95:.0f}"
    )
    typer.echo(f"  {'clarify overruled':<24} {m.clarify_overruled}")
    typer.echo("  by tag: " + ", ".join(f"{t} {v:.0%}" for t, v in m.accuracy_by_tag.items()))
