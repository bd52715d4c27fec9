"""The workflow sandbox durable-loop's plugin configures: cheap to start, and still a
sandbox (a workflow reading the clock is refused, workflow module state is fresh for every
run, the checked-in histories replay under it)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import sys
import uuid
from pathlib import Path
from types import ModuleType

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer, Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.session_start_cost import probe_details
from durable_loop.testing.history import replay_failures
from durable_loop.worker.plugin import DurableLoopPlugin
from durable_loop.worker.sandbox import passthrough_modules, workflow_helper_modules
from durable_loop.workflows.registered import WORKFLOWS
from durable_loop.workflows.session import SessionWorkflow
from tests.worker.sandboxed_workflows import (
    ClockReadingWorkflow,
    HelperClock,
    HelperClockWorkflow,
    SandboxProbe,
)

HISTORIES = Path(__file__).parents[1] / "histories"


def plugin_runner(**options: bool) -> SandboxedWorkflowRunner:
    runner = DurableLoopPlugin(**options)._workflow_runner(None)
    assert isinstance(runner, SandboxedWorkflowRunner)
    return runner


def sandbox_modules(runner: SandboxedWorkflowRunner, workflow: type) -> dict[str, ModuleType]:
    """The modules one new workflow run sees (its sandbox's sys.modules)."""
    instance = runner.create_instance(probe_details(workflow))
    return instance.importer.new_modules  # type: ignore[attr-defined]


async def test_a_workflow_reading_the_clock_is_refused_and_its_module_is_fresh_per_run(
    temporal_env,
):
    queue = f"sandbox-{uuid.uuid4().hex[:8]}"
    worker = Worker(
        temporal_env.client,
        task_queue=queue,
        workflows=[ClockReadingWorkflow],
        plugins=[DurableLoopPlugin()],
    )
    async with worker:
        probes = [
            await temporal_env.client.execute_workflow(
                ClockReadingWorkflow.run,
                id=f"{queue}-{n}",
                task_queue=queue,
                result_type=SandboxProbe,
            )
            for n in range(2)
        ]
    assert probes == [SandboxProbe(clock="refused", runs_seen_by_module=1)] * 2


async def test_a_passed_through_helper_reading_the_clock_fails_the_replay_tests(temporal_env):
    """What passing workflow helpers through relies on: a helper the worker lets read the
    clock is refused when the test's history is replayed (replay_failures)."""
    queue = f"helper-{uuid.uuid4().hex[:8]}"
    helper = "tests.worker.sandboxed_helpers"
    runner = plugin_runner()
    passing = dataclasses.replace(
        runner, restrictions=runner.restrictions.with_passthrough_modules(helper)
    )
    worker = Worker(
        temporal_env.client,
        task_queue=queue,
        workflows=[HelperClockWorkflow],
        plugins=[DurableLoopPlugin()],
        workflow_runner=passing,
    )
    async with worker:
        handle = await temporal_env.client.start_workflow(
            HelperClockWorkflow.run, id=queue, task_queue=queue, result_type=HelperClock
        )
        assert await handle.result() == HelperClock(read=True)
    history = await handle.fetch_history()
    failures = await replay_failures([history], [HelperClockWorkflow])
    assert list(failures.values()) and "datetime.datetime.now" in next(iter(failures.values()))


async def test_durable_loops_workflow_modules_are_fresh_per_run_and_share_their_code():
    runner = plugin_runner()
    first, second = (sandbox_modules(runner, SessionWorkflow) for _ in range(2))
    name = SessionWorkflow.__module__
    assert first[name] is not second[name] is not sys.modules[name]
    fresh_class = first[name].SessionWorkflow
    assert fresh_class is not second[name].SessionWorkflow is not SessionWorkflow
    assert fresh_class.run.__code__ is second[name].SessionWorkflow.run.__code__
    for helper in workflow_helper_modules():
        if helper in first:
            assert first[helper] is second[helper] is sys.modules[helper], helper


async def test_sandbox_passthrough_passes_the_workflow_modules_through_too():
    modules = sandbox_modules(plugin_runner(sandbox_passthrough=True), SessionWorkflow)
    name = SessionWorkflow.__module__
    assert modules[name] is sys.modules[name]


def test_only_the_modules_defining_workflows_stay_sandboxed():
    helpers = workflow_helper_modules()
    defining = {w.__module__ for w in WORKFLOWS}
    assert helpers and not defining & set(helpers)
    assert "durable_loop.workflows.tool_loop" in helpers
    passed = set(plugin_runner().restrictions.passthrough_modules)
    assert {"durable_loop.core", *helpers} <= passed
    assert "durable_loop" not in passed and not defining & passed


MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "add",
     "discard", "setdefault", "sort", "reverse", "__setitem__", "__delitem__"}
)  # fmt: skip


def module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def state_changes(source: str) -> list[str]:
    """Where code in a function could change the module's own state: a ``global``
    statement, or an item set, deleted or mutated on a module-level name."""
    tree = ast.parse(source)
    names = module_names(tree)
    found: list[str] = []
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                found.append(f"line {node.lineno}: global {', '.join(node.names)}")
            target = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
                target = node.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
            ):
                target = node.func.value
            if isinstance(target, ast.Name) and target.id in names:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def modules_under(name: str) -> list[ModuleType]:
    module = importlib.import_module(name)
    if not hasattr(module, "__path__"):
        return [module]
    children = pkgutil.walk_packages(module.__path__, f"{name}.")
    return [module, *(importlib.import_module(m.name) for m in children)]


PROCESS_SETUP = {"durable_loop.core.recoveries.registry": ["REGISTRY.add(recovery)"]}
"""State set up once per process by the application, never by a run: ``register`` of a
recovery (no workflow code calls it; runs must share it, which is why it is passed
through)."""


@pytest.mark.parametrize("name", [m for m in passthrough_modules() if m.startswith("durable")])
def test_no_run_can_change_the_state_of_a_passed_through_module(name: str):
    """A module imported once is shared by every run: code that changes its module-level
    values could carry one run's state into another (the sandbox would have reset it)."""
    changes = {
        m.__name__: found
        for m in modules_under(name)
        if m.__file__
        and (found := state_changes(Path(m.__file__).read_text()))
        and [f.split(": ", 1)[1] for f in found] != PROCESS_SETUP.get(m.__name__)
    }
    assert not changes, f"module state changed from functions: {changes}"


def test_the_state_check_sees_a_change():
    source = "SEEN = []\ndef note(x):\n    SEEN.append(x)\n"
    assert state_changes(source) == ["line 3: SEEN.append(x)"]
    assert state_changes("N = 0\ndef bump():\n    global N\n    N += 1\n") == ["line 3: global N"]
    assert state_changes("T = {}\ndef f(x):\n    local = {}\n    local[x] = T.get(x)\n") == []


async def test_checked_in_histories_replay_under_the_plugins_sandbox():
    histories = sorted(HISTORIES.glob("*.json"))
    assert histories
    replayer = Replayer(workflows=[], plugins=[DurableLoopPlugin()])
    for path in histories:
        history = WorkflowHistory.from_json(path.name.split(".")[0], path.read_text())
        await replayer.replay_workflow(history)
