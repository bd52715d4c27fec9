"""``durable-loop eval``: tool-calling reliability per model, offline (scripted
behaviours) by default, live against any endpoint with --live, the local model with
--local. Every flag has a DURABLE_LOOP_EVAL_* environment variable of the same name."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from durable_loop.cli.codes import CliCode
from durable_loop.cli.commands.options import Address, ApiKey, DbUrl, Namespace
from durable_loop.cli.errors import CliError
from durable_loop.cli.local_llm import MAX_N_CTX, N_CTX
from durable_loop.evals.codes import EvalCode

ENV = "DURABLE_LOOP_EVAL_"
SUITES = ("scenarios", "bfcl")


def _opt(name: str, help: str, **kw: Any) -> Any:
    env = ENV + name.lstrip("-").replace("-", "_").upper()
    return typer.Option(name, envvar=env, help=f"{help} Env: {env}.", **kw)


def _json(text: str | None, flag: str) -> dict[str, object]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as err:
        raise CliError(EvalCode.BAD_JSON, f"{flag} is not valid JSON: {err}") from None
    if not isinstance(value, dict):
        raise CliError(EvalCode.BAD_JSON, f"{flag} must be a JSON object")
    return value


def eval_command(
    scenarios: Annotated[
        str,
        _opt(
            "--scenarios",
            "Preset (smoke, typical, extreme, all) and/or scenario names, comma-separated.",
        ),
    ] = "smoke",
    trials: Annotated[int, _opt("--trials", "Runs per scenario.", min=1)] = 1,
    jobs: Annotated[int, _opt("--jobs", "Sessions run concurrently.", min=1)] = 1,
    live: Annotated[bool, _opt("--live", "Run against real endpoints (needs API keys).")] = False,
    local: Annotated[
        bool, _opt("--local", "Run against the local model (durable-loop local-llm); no key.")
    ] = False,
    behaviours: Annotated[
        str, _opt("--behaviours", "Offline: scripted behaviours, comma-separated, or all.")
    ] = "all",
    models: Annotated[
        str,
        _opt("--models", "Live: model filter (ids, provider:X, tag:X, * wildcards, ! exclusions)."),
    ] = "tag:stable",
    provider: Annotated[
        str, _opt("--provider", "Live: adapter for ids not in the catalog.")
    ] = "openrouter",
    base_url: Annotated[
        str | None, _opt("--base-url", "Live: endpoint base URL (default per provider).")
    ] = None,
    api_prefix: Annotated[str | None, _opt("--api-prefix", "Live: path prefix, e.g. /v1.")] = None,
    api_key_env: Annotated[
        str | None, _opt("--api-key-env", "Live: variable holding the API key.")
    ] = None,
    profiles: Annotated[
        str, _opt("--profiles", "Live: sampling profiles, comma-separated.")
    ] = "default",
    strategies: Annotated[
        str, _opt("--strategies", "baseline and/or production (catalog workarounds).")
    ] = "baseline,production",
    fallback_matrix: Annotated[
        bool, _opt("--fallback-matrix", "Live: run with and without a fallback model.")
    ] = False,
    fallback_model: Annotated[
        str | None, _opt("--fallback-model", "Live: the fallback model id.")
    ] = None,
    timeout: Annotated[
        float, _opt("--timeout", "Client timeout per request and per run, seconds.")
    ] = 120.0,
    request_overrides: Annotated[
        str | None,
        _opt(
            "--request-overrides",
            'JSON merged into every request, e.g. {"provider": {"only": ["groq"]}}.',
        ),
    ] = None,
    sampling_defaults: Annotated[
        str | None, _opt("--sampling-defaults", "JSON sampling options under every profile.")
    ] = None,
    pipeline: Annotated[
        str, _opt("--pipeline", "tool_loop, or router (runs the routing benchmark).")
    ] = "tool_loop",
    suite: Annotated[
        str, _opt("--suite", "scenarios (ours, --scenarios), or bfcl (BFCL's entries).")
    ] = "scenarios",
    categories: Annotated[
        str, _opt("--categories", "bfcl: categories or groups (non_live, live, all).")
    ] = "all",
    sample: Annotated[
        int | None, _opt("--sample", "bfcl: entries per category, seeded (default: all).", min=1)
    ] = None,
    seed: Annotated[int, _opt("--seed", "bfcl: the sample's seed.")] = 0,
    entries: Annotated[
        str | None,
        _opt("--entries", "bfcl: entry ids, comma-separated (instead of --categories/--sample)."),
    ] = None,
    out: Annotated[Path, _opt("--out", "Report root directory.")] = Path("eval-reports"),
    resume: Annotated[
        Path | None,
        _opt(
            "--resume",
            "A report directory of a stopped run (same options): its runs are kept, the "
            "rest run, and the report is written there.",
        ),
    ] = None,
    local_port: Annotated[
        int, _opt("--local-port", "Port for the in-process local model (0: a free one).")
    ] = 0,
    ctx_size: Annotated[
        int | None,
        _opt(
            "--ctx-size",
            "Local: the context window of the local model server the eval starts, in tokens "
            f"(as local-llm --ctx-size; default {N_CTX}). Unused with --base-url.",
            min=512,
            max=MAX_N_CTX,
        ),
    ] = None,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="Per-run lines.")] = 0,
    from_sessions: Annotated[
        str | None,
        _opt(
            "--from-sessions",
            "Replay eval: recorded sessions (comma-separated) re-asked of --model, tool "
            "calls answered from the record.",
        ),
    ] = None,
    model: Annotated[str | None, _opt("--model", "Replay eval: the model to ask.")] = None,
    preset: Annotated[
        str, _opt("--preset", "Replay eval: recorded (the session's settings) or production.")
    ] = "recorded",
    tools: Annotated[
        str | None,
        _opt(
            "--tools",
            "Replay eval: package.module:attribute of a ToolRegistry; its schemas are offered "
            "(default: the schemas the session recorded; names only for older sessions).",
        ),
    ] = None,
    run_tools: Annotated[
        bool,
        _opt("--run-tools", "Replay eval: run new calls against the --tools bodies."),
    ] = False,
    judge_model: Annotated[
        str | None,
        _opt("--judge-model", "Replay eval: a model judging same/different final answers."),
    ] = None,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    db_url: DbUrl = None,
) -> None:
    """Measure tool-calling reliability: scenarios through the real session workflow."""
    if resume is not None and (from_sessions is not None or pipeline == "router"):
        raise CliError(
            EvalCode.BAD_RESUME,
            "--resume continues a scenario or BFCL run; replay evals and the router "
            "pipeline have none to continue",
        )
    if from_sessions is not None:
        _replay(
            from_sessions,
            ReplayFlags(
                model=model,
                preset=preset,
                base_url=base_url,
                tools=tools,
                run_tools=run_tools,
                judge_model=judge_model,
                local=local,
                local_port=local_port,
                local_ctx_size=ctx_size,
                out=out,
            ),
            temporal={"address": address, "namespace": namespace, "api_key": api_key},
            db_url=db_url,
        )
        return
    if pipeline == "router":
        _route_bench(
            local=local,
            base_url=base_url,
            models=models,
            provider=provider,
            api_key_env=api_key_env,
            behaviours=behaviours,
            timeout=timeout,
            out=out,
            local_port=local_port,
            local_ctx_size=ctx_size,
        )
        return
    if pipeline != "tool_loop":
        raise CliError(
            EvalCode.UNKNOWN_PIPELINE,
            f"unknown pipeline {pipeline!r}; pipelines: tool_loop, router",
        )
    if suite not in SUITES:
        raise CliError(
            CliCode.UNKNOWN_SCENARIO, f"unknown suite {suite!r}; suites: {', '.join(SUITES)}"
        )
    from durable_loop.evals.run import EvalOptions, execute

    opts = EvalOptions(
        scenarios=scenarios,
        trials=trials,
        jobs=jobs,
        live=live,
        local=local,
        behaviours=behaviours,
        models=models,
        provider=provider,
        base_url=base_url,
        api_prefix=api_prefix,
        api_key_env=api_key_env,
        profiles=profiles,
        strategies=strategies,
        fallback_matrix=fallback_matrix,
        fallback_model=fallback_model,
        timeout_s=timeout,
        request_overrides=_json(request_overrides, "--request-overrides"),  # type: ignore[arg-type]
        sampling_defaults=_json(sampling_defaults, "--sampling-defaults"),  # type: ignore[arg-type]
        out=out,
        verbose=verbose,
        local_port=local_port,
        local_ctx_size=ctx_size,
        resume=resume,
    )
    console = Console(stderr=True)
    if suite == "bfcl":
        from durable_loop.evals.bfcl.run import BfclSelection, execute_bfcl

        chosen = tuple(part.strip() for part in (entries or "").split(",") if part.strip())
        selection = BfclSelection(categories=categories, sample=sample, seed=seed, entries=chosen)
        directory, summary = asyncio.run(execute_bfcl(opts, selection, console))
    else:
        directory, summary = asyncio.run(execute(opts, console))
    print((directory / "report.md").read_text())
    console.print(
        f"report: {directory}  (overall {summary.overall.success_rate:.0%}, "
        f"tool scenarios {summary.tool_scenarios.success_rate:.0%})"
    )


@dataclass(frozen=True)
class ReplayFlags:
    model: str | None
    preset: str
    base_url: str | None
    tools: str | None
    run_tools: bool
    judge_model: str | None
    local: bool
    local_port: int
    local_ctx_size: int | None
    out: Path


def _replay(
    from_sessions: str,
    flags: ReplayFlags,
    *,
    temporal: dict[str, str | None],
    db_url: str | None,
) -> None:
    """``--from-sessions``: the replay eval (durable_loop.evals.replay) of those sessions,
    read from the server and store the connection flags name; ``--local`` asks the local
    model (by default its packaged alias)."""
    from durable_loop.cli.local_llm import DEFAULT_ALIAS
    from durable_loop.core.errors import DurableLoopError
    from durable_loop.evals.replay.run import (
        LOCAL_ENDPOINT,
        PRESETS,
        ToolSource,
        execute_replay,
        replay_settings,
    )
    from durable_loop.evals.run import EvalOptions, local_model
    from durable_loop.tools.loader import load_registry
    from durable_loop.worker.settings import WorkerSettings

    model = flags.model or (DEFAULT_ALIAS if flags.local else None)
    if not model:
        raise CliError(EvalCode.MISSING_MODEL, "--from-sessions needs --model: the model to ask")
    if flags.preset not in PRESETS:
        raise CliError(
            EvalCode.UNKNOWN_STRATEGY,
            f"unknown preset {flags.preset!r}; presets: {', '.join(PRESETS)}",
        )
    ids = [s.strip() for s in from_sessions.split(",") if s.strip()]
    settings = WorkerSettings.load(temporal=temporal, db_url=db_url)
    given = load_registry(flags.tools) if flags.tools else None
    source = ToolSource(given=given, run_new=flags.run_tools, judge_model=flags.judge_model)
    console = Console(stderr=True)
    opts = EvalOptions(
        local=True,
        base_url=flags.base_url,
        local_port=flags.local_port,
        local_ctx_size=flags.local_ctx_size,
    )
    try:
        with contextlib.ExitStack() as stack:
            base_url = flags.base_url
            if flags.local:
                base_url = stack.enter_context(local_model(opts, console))
            endpoint = LOCAL_ENDPOINT if flags.local else None
            choose = replay_settings(model, flags.preset, base_url, endpoint)
            directory = asyncio.run(execute_replay(settings, ids, choose, flags.out, source))
    except DurableLoopError as err:
        if isinstance(err, CliError):
            raise
        raise CliError(err.code, err.message) from None
    print((directory / "report.md").read_text())
    console.print(f"report: {directory}")


def _route_bench(
    *,
    local: bool,
    base_url: str | None,
    models: str,
    provider: str,
    api_key_env: str | None,
    behaviours: str,
    timeout: float,
    out: Path,
    local_port: int,
    local_ctx_size: int | None,
) -> None:
    """``--pipeline router``: the routing benchmark with the eval flags that apply to it
    (offline: a scripted behaviour; live: one model id; --local: the local model)."""
    from durable_loop.cli.local_llm import DEFAULT_ALIAS
    from durable_loop.evals.routing.command import route_bench
    from durable_loop.evals.routing.scripted_models import BEHAVIOURS
    from durable_loop.evals.run import EvalOptions, local_model

    if local:
        opts = EvalOptions(
            local=True,
            base_url=base_url,
            local_port=local_port,
            local_ctx_size=local_ctx_size,
            out=out,
        )
        model = models if models != "tag:stable" else DEFAULT_ALIAS
        with local_model(opts, Console(stderr=True)) as url:
            route_bench(base_url=url, model=model, timeout_s=timeout, out=out)
        return
    if base_url is None:
        scripted = "keyword" if behaviours == "all" else behaviours
        if scripted not in BEHAVIOURS:
            raise CliError(
                EvalCode.UNKNOWN_BEHAVIOUR,
                f"unknown routing behaviour {scripted!r}; behaviours: {', '.join(BEHAVIOURS)}",
            )
        route_bench(scripted=scripted, timeout_s=timeout, out=out)
        return
    if any(mark in models for mark in ("*", ":", "!", ",")):
        raise CliError(
            EvalCode.MODEL_FILTER_UNSUPPORTED,
            f"--pipeline router measures one model; give its id with --models, not {models!r}",
        )
    route_bench(
        base_url=base_url,
        model=models,
        provider="openai" if provider == "openrouter" else provider,
        api_key_env=api_key_env,
        timeout_s=timeout,
        out=out,
    )
