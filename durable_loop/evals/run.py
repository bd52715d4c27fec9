"""One ``durable-loop eval`` run of a suite (ours, or BFCL's through :class:`Suite`): build
the jobs, run them with a progress bar, write the report. Offline (scripted behaviours,
time-skipping server) unless live or local."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
from pydantic import JsonValue
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from durable_loop.cli.codes import CliCode
from durable_loop.cli.devserver import free_port
from durable_loop.cli.errors import CliError
from durable_loop.cli.local_llm import DEFAULT_ALIAS, ensure_model
from durable_loop.core.catalog import SamplingProfile
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.evals.behaviours import BEHAVIOURS, behaviour
from durable_loop.evals.codes import EvalCode
from durable_loop.evals.filters import Selected, select_models
from durable_loop.evals.harness import eval_target
from durable_loop.evals.journal import journal, recorded, resume
from durable_loop.evals.plan import LiveModel, LivePlan, live_jobs, offline_jobs
from durable_loop.evals.profiles import profiles
from durable_loop.evals.report import build_summary, report_dir, write_report
from durable_loop.evals.runner import Job, run_jobs
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.schema import RunRecord, Summary
from durable_loop.evals.selection import select_scenarios
from durable_loop.testing.scripted import ScriptedLLM

STRATEGIES = ("baseline", "production")
PROVIDER_URLS = {
    "openrouter": ("https://openrouter.ai/api", "/v1", "OPENROUTER_API_KEY"),
    "openai": ("https://api.openai.com", "/v1", "OPENAI_API_KEY"),
    "anthropic": ("https://api.anthropic.com", "/v1", "ANTHROPIC_API_KEY"),
    "gemini": ("https://generativelanguage.googleapis.com", "/v1beta", "GEMINI_API_KEY"),
}


@dataclass
class EvalOptions:
    scenarios: str = "smoke"
    trials: int = 1
    jobs: int = 1
    live: bool = False
    local: bool = False
    behaviours: str = "all"
    models: str = "tag:stable"
    provider: str = "openrouter"
    base_url: str | None = None
    api_prefix: str | None = None
    api_key_env: str | None = None
    profiles: str = "default"
    strategies: str = "baseline,production"
    fallback_matrix: bool = False
    fallback_model: str | None = None
    timeout_s: float = 120.0
    request_overrides: dict[str, JsonValue] = field(default_factory=dict)
    sampling_defaults: dict[str, JsonValue] = field(default_factory=dict)
    out: Path = Path("eval-reports")
    verbose: int = 0
    local_port: int = 0
    """0: a free port."""
    local_ctx_size: int | None = None
    """The started server's context in tokens (None: local-llm's default)."""
    resume: Path | None = None
    """A report directory of a stopped run: its runs are kept, the rest run, the report is
    written there (evals/journal.py)."""


def strategies(spec: str) -> list[str]:
    names = [s.strip() for s in spec.split(",") if s.strip()] or list(STRATEGIES)
    for name in names:
        if name not in STRATEGIES:
            raise CliError(
                EvalCode.UNKNOWN_STRATEGY,
                f"unknown strategy {name!r}; strategies: {', '.join(STRATEGIES)}",
            )
    return names


def endpoint_for(model: Selected, opts: EvalOptions) -> LlmEndpoint:
    base, prefix, key = PROVIDER_URLS.get(model.provider, (None, None, None))
    base_url = opts.base_url or base
    if base_url is None:
        raise CliError(
            EvalCode.NO_BASE_URL, f"--base-url is needed for provider {model.provider!r}"
        )
    key_env = opts.api_key_env or key
    if key_env and not os.environ.get(key_env) and not opts.local:
        raise CliError(
            EvalCode.NO_API_KEY, f"live mode needs the key in ${key_env} (or --api-key-env)"
        )
    return LlmEndpoint(
        provider=model.provider,
        model=model.model,
        base_url=base_url,
        api_prefix=opts.api_prefix if opts.api_prefix is not None else prefix,
        api_key_env=None if opts.local else key_env,
        timeout_s=opts.timeout_s,
        retry=RetrySettings(initial_interval_s=1.0, maximum_interval_s=10.0, maximum_attempts=3),
    )


def live_plan(opts: EvalOptions) -> tuple[LivePlan, dict[str, list[str]]]:
    selected = select_models(opts.models, default_provider=opts.provider)
    wanted = profiles(opts.profiles)
    models: list[LiveModel] = []
    applicable: dict[str, list[str]] = {}
    used: dict[str, SamplingProfile] = {}
    for model in selected:
        endpoint = endpoint_for(model, opts)
        models.append(LiveModel(endpoint=endpoint, label=model.model))
        resolved = [(p.name, p.resolve(model)) for p in wanted]
        applicable[model.model] = [name for name, prof in resolved if prof is not None]
        for name, prof in resolved:
            if prof is not None:
                used.setdefault(name, prof)
    fallback = None
    if opts.fallback_matrix:
        if not opts.fallback_model:
            raise CliError(EvalCode.NO_FALLBACK_MODEL, "--fallback-matrix needs --fallback-model")
        fallback = endpoint_for(
            select_models(opts.fallback_model, default_provider=opts.provider)[0], opts
        )
    plan = LivePlan(
        models=models,
        profiles=[SamplingProfile(name=n, options=dict(p.options)) for n, p in used.items()],
        strategies=strategies(opts.strategies),
        fallback=[False, True] if opts.fallback_matrix else [False],
        trials=opts.trials,
        timeout_s=opts.timeout_s,
        request_overrides=opts.request_overrides,
        sampling_defaults=opts.sampling_defaults,
        fallback_model=fallback,
        heartbeat_timeout_s=max(60.0, opts.timeout_s),
    )
    return plan, applicable


def offline_plan(opts: EvalOptions, llm: ScriptedLLM) -> list[Job]:
    names = list(BEHAVIOURS) if opts.behaviours in ("", "all") else opts.behaviours.split(",")
    return behaviour_jobs(names, select_scenarios(opts.scenarios), llm, opts)


def behaviour_jobs(
    names: list[str], scenarios: list[Scenario], llm: ScriptedLLM, opts: EvalOptions
) -> list[Job]:
    """Each named scripted behaviour over ``scenarios``, under each strategy: broken
    under ``baseline``, with its fix under ``production``."""
    jobs: list[Job] = []
    for name in names:
        b = behaviour(name.strip())
        for strategy in strategies(opts.strategies):
            update = b.broken_under if strategy == "baseline" else {**b.broken_under, **b.fix}
            jobs += offline_jobs(
                scenarios, b, llm, strategy=strategy, update=update, trials=opts.trials
            )
    return jobs


@contextmanager
def local_model(opts: EvalOptions, console: Console) -> Iterator[str]:
    """The local model's base URL: --base-url if given, else ``durable-loop local-llm`` in a
    child process (in-process, llama.cpp would starve the worker's heartbeats of the GIL)."""
    if opts.base_url:
        yield opts.base_url
        return
    ensure_model("1.5b", console=console)
    port = opts.local_port or free_port()
    child = subprocess.Popen(
        local_server_command(opts, port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base_url, child)
        console.print(f"local model ready at {base_url}")
        yield base_url
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def local_server_command(opts: EvalOptions, port: int) -> list[str]:
    """``durable-loop local-llm`` for the eval's own server (the model is fetched first)."""
    command = [sys.executable, "-m", "durable_loop", "local-llm", "--no-fetch", "--port", str(port)]
    if opts.local_ctx_size is not None:
        command += ["--ctx-size", str(opts.local_ctx_size)]
    return command


def _wait_ready(base_url: str, child: subprocess.Popen[bytes], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise CliError(
                CliCode.LOCAL_LLM_NOT_READY, f"durable-loop local-llm exited ({child.returncode})"
            )
        try:
            if httpx.get(f"{base_url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise CliError(
        CliCode.LOCAL_LLM_NOT_READY, f"{base_url}/health not ready after {timeout_s:.0f}s"
    )


def _line(record: RunRecord) -> str:
    mark = "[green]ok[/]" if record.ok else f"[red]{record.failure}[/]"
    return (
        f"{record.model} / {record.profile} / {record.strategy} / {record.scenario} "
        f"#{record.trial}: {mark} {record.latency_ms / 1000:.1f}s"
        + (f" ({'; '.join(record.problems)[:120]})" if record.problems and record.problems else "")
    )


@dataclass(frozen=True)
class Suite:
    """What one suite brings to a run; planning, progress and the report are shared."""

    label: str
    """The progress bar's description."""
    scenarios: list[Scenario]
    """What live jobs are planned over."""
    offline_jobs: Callable[[ScriptedLLM], list[Job]]
    run_jobs: Callable[[list[Job], str, Callable[[RunRecord], None]], Awaitable[list[RunRecord]]]
    """Runs the jobs in an environment of the kind given (``dev`` or ``timeskip``)."""
    summary_scenarios: list[str]
    written: Callable[[Path, list[RunRecord]], object] | None = None
    """Writes what the suite adds to the report directory."""


async def execute(opts: EvalOptions, console: Console | None = None) -> tuple[Path, Summary]:
    scenarios = select_scenarios(opts.scenarios)

    async def in_target(
        jobs: list[Job], kind: str, on_record: Callable[[RunRecord], None]
    ) -> list[RunRecord]:
        async with eval_target(kind, os.environ) as target:
            return await run_jobs(jobs, target, parallel=opts.jobs, on_record=on_record)

    suite = Suite(
        label="eval runs",
        scenarios=scenarios,
        offline_jobs=lambda llm: offline_plan(opts, llm),
        run_jobs=in_target,
        summary_scenarios=[s.name for s in scenarios],
    )
    return await run_suite(opts, suite, console)


async def run_suite(
    opts: EvalOptions, suite: Suite, console: Console | None = None
) -> tuple[Path, Summary]:
    """Plan the suite's jobs (live, local or scripted), run them under a progress bar and
    write the report."""
    console = console or Console(stderr=True)
    started = datetime.now(UTC)
    earlier = recorded(opts.resume) if opts.resume is not None else []
    with ExitStack() as stack:
        if opts.local:
            _use_local_model(opts, stack.enter_context(local_model(opts, console)))
        live = opts.live or opts.local
        if live:
            plan, applicable = live_plan(opts)
            jobs, kind = live_jobs(plan, suite.scenarios, applicable), "dev"
        else:
            jobs, kind = suite.offline_jobs(stack.enter_context(ScriptedLLM())), "timeskip"
        if opts.resume is not None:
            resumed = resume(jobs, earlier, opts.resume)
            earlier, jobs, directory = resumed.records, resumed.jobs, opts.resume
            console.print(f"resuming {directory}: {len(earlier)} runs recorded, {len(jobs)} to run")
        else:
            directory = report_dir(opts.out, started)
        with journal(directory, earlier) as write:
            records = earlier + await _run_with_progress(suite, jobs, kind, opts, console, write)
    summary = build_summary(
        records,
        mode="live" if live else "offline",
        scenarios=suite.summary_scenarios,
        trials=opts.trials,
        started_at=started.isoformat(timespec="seconds"),
        resumed_runs=len(earlier),
    )
    write_report(directory, records, summary)
    if suite.written is not None:
        suite.written(directory, records)
    return directory, summary


def _use_local_model(opts: EvalOptions, base_url: str) -> None:
    """Point the run at the local model, with the catalog's models and profiles unless
    others were asked for."""
    opts.base_url, opts.provider = base_url, "openai"
    if opts.models == "tag:stable":
        opts.models = DEFAULT_ALIAS
    if opts.profiles == "default":
        opts.profiles = "catalog"


async def _run_with_progress(
    suite: Suite,
    jobs: list[Job],
    kind: str,
    opts: EvalOptions,
    console: Console,
    write: Callable[[RunRecord], None],
) -> list[RunRecord]:
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task(suite.label, total=len(jobs))

        def on_record(record: RunRecord) -> None:
            write(record)
            progress.advance(task)
            if opts.verbose:
                progress.console.print(_line(record), highlight=False)

        return await suite.run_jobs(jobs, kind, on_record)
