"""Run offline eval jobs on the test suite's worker (loop_worker fixture)."""

from __future__ import annotations

from durable_loop.evals.behaviours import behaviour
from durable_loop.evals.harness import eval_registry
from durable_loop.evals.plan import Update, offline_jobs
from durable_loop.evals.runner import EvalTarget, run_jobs
from durable_loop.evals.scenario import Scenario
from durable_loop.evals.schema import RunRecord
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import open_workspace_store
from durable_loop.testing import ScriptedLLM


async def run_offline(
    loop_worker,
    store_url: str,
    llm: ScriptedLLM,
    runs: list[tuple[str, str, Update, list[Scenario]]],
) -> dict[tuple[str, str], RunRecord]:
    """``runs``: (behaviour, strategy, runtime update, scenarios); keyed by
    (behaviour/strategy, scenario)."""
    workspace = open_workspace_store(StoreConfig(url=store_url))
    jobs = []
    for name, strategy, update, scenarios in runs:
        jobs += offline_jobs(scenarios, behaviour(name), llm, strategy=strategy, update=update)
    try:
        async with loop_worker(eval_registry(workspace)) as w:
            target = EvalTarget(sessions=w.sessions, store=w.store, workspace=workspace)
            records = await run_jobs(jobs, target, parallel=8)
    finally:
        await workspace.close()
    return {(f"{r.model}/{r.strategy}", r.scenario): r for r in records}
