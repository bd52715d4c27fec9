"""The workflow sandbox durable-loop's workers run: what is imported once per process and
what is imported again for every workflow run.

Temporal's sandbox imports a workflow's module afresh for every workflow run (a new session,
or one evicted from the worker's cache and replayed), together with every module it imports
that is not *passed through* from the host. For a session that was 17 durable_loop modules,
~24 ms of CPU for its first workflow task and ~380 KB of heap held by every cached session
(``bench/session_start_cost.py``). Two changes bring that to ~3.5 ms and ~44 KB:

* **Passed through** (imported once, shared by every run): the pure core
  (``durable_loop.core``, the models every workflow input and output is made of) and the
  helper modules of ``durable_loop.workflows`` that define no workflow class (the tool loop,
  approvals, routing...). They hold no module-level state a run could change (checked by
  ``tests/worker/test_sandbox.py``) and import no clock, random, uuid, environment,
  processes, threads or sockets (the import-linter contracts on ``durable_loop.core`` and
  ``durable_loop.workflows``). The sandbox's own checks still reach them in the tests:
  every history a test produces is replayed by
  ``durable_loop.testing.history.replay_failures``
  under the SDK's default sandbox, where they are imported and restricted per run again,
  so a clock read or a random number in them fails a test.
* **Still sandboxed**: each module that defines a workflow class (``WORKFLOWS``), so its
  module state is fresh for every run and the sandbox's restrictions apply to its code,
  as the SDK intends. Their compiled code objects are shared between runs
  (:class:`SharedWorkflowCode`): the module is still executed anew, but its bytecode is
  not read and unmarshalled again. Code objects are immutable, and a worker never runs
  workflow code that changed on disk after it started.

Each workflow task also crosses into the sandbox for the SDK's own bookkeeping: once per
activation and once more for every payload the activation carries or its completion sends
(the serialization context and the external store context), each time compiling the same
snippet of code anew and swapping the sandbox's modules and builtins in and out. For a
session turn that was ~25 crossings (:class:`ContextsOutsideRunner`): the snippets are
compiled once per process, and the two contexts are read from the in-sandbox instance
directly. They are SDK code that reads the run's info and pending commands and builds the
SDK's context records; no workflow code runs in them, so the sandbox has nothing to
restrict there.

The SDK default (``SandboxRestrictions.default``) already passes through the standard
library, ``temporalio``, ``pydantic`` and ``pydantic_core``. ``sandbox_passthrough=True``
(:class:`~durable_loop.worker.builder.WorkerTuning`) still passes all of durable_loop
through, workflow modules included.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.abc
import importlib.machinery
import pkgutil
import sys
from collections.abc import Sequence
from types import CodeType, ModuleType
from typing import Any, ClassVar

from temporalio.converter import SerializationContext, StorageDriverStoreContext
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._runner import _Instance

import durable_loop.workflows
from durable_loop.workflows.registered import WORKFLOWS

__all__ = [
    "CORE_MODULES",
    "ContextsOutsideRunner",
    "SharedWorkflowCode",
    "passthrough_modules",
    "sandboxed_runner",
    "workflow_helper_modules",
]

CORE_MODULES = "durable_loop.core"
EVERYTHING = "durable_loop"
WORKFLOW_PACKAGE = durable_loop.workflows.__name__


def workflow_helper_modules(workflows: Sequence[type] = WORKFLOWS) -> tuple[str, ...]:
    """The modules of ``durable_loop.workflows`` that define none of ``workflows``."""
    defining = {w.__module__ for w in workflows}
    names = (
        f"{WORKFLOW_PACKAGE}.{m.name}"
        for m in pkgutil.iter_modules(durable_loop.workflows.__path__)
        if not m.ispkg
    )
    return tuple(sorted(n for n in names if n not in defining))


def passthrough_modules(everything: bool = False) -> tuple[str, ...]:
    """What durable-loop passes through the sandbox (``everything``: all of durable_loop)."""
    if everything:
        return (EVERYTHING,)
    return (CORE_MODULES, *workflow_helper_modules())


def sandboxed_runner(
    existing: WorkflowRunner | None, *, everything: bool = False
) -> WorkflowRunner:
    """``existing`` (the SDK default sandbox when ``None``) with durable-loop's modules
    passed through, the workflow modules' code shared and the SDK's contexts read outside
    the sandbox (:class:`ContextsOutsideRunner`); a user's own restrictions stay, and an
    unsandboxed runner, or a sandboxed runner of the user's own class, keeps its class."""
    if existing is None:
        existing = SandboxedWorkflowRunner(restrictions=SandboxRestrictions.default)
    if not isinstance(existing, SandboxedWorkflowRunner):
        return existing
    SharedWorkflowCode.install()
    modules = passthrough_modules(everything)
    restrictions = existing.restrictions
    if not set(modules) <= restrictions.passthrough_modules:
        restrictions = restrictions.with_passthrough_modules(*modules)
    if type(existing) is SandboxedWorkflowRunner:
        return ContextsOutsideRunner.like(existing, restrictions)
    if restrictions is existing.restrictions:
        return existing
    return dataclasses.replace(existing, restrictions=restrictions)


@functools.lru_cache(maxsize=32)
def _compiled(snippet: str) -> CodeType:
    """The sandbox runner's snippets (a handful of constant strings), compiled once."""
    return compile(snippet, "<string>", "exec")


class _ContextsOutsideInstance(_Instance):
    def _run_code(self, code: str, **extra_globals: Any) -> None:
        super()._run_code(_compiled(code), **extra_globals)  # type: ignore[arg-type]

    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        inside: Any = self.globals_and_locals.get("__temporal_in_sandbox")
        if inside is None:
            return super().get_serialization_context(command_info)
        return inside.get_serialization_context(command_info)

    def get_external_store_context(self, command_info: Any) -> StorageDriverStoreContext:
        inside: Any = self.globals_and_locals.get("__temporal_in_sandbox")
        if inside is None:
            return super().get_external_store_context(command_info)
        return inside.get_external_store_context(command_info)


@dataclasses.dataclass(frozen=True)
class ContextsOutsideRunner(SandboxedWorkflowRunner):
    """The SDK's sandboxed runner, whose instances compile its code snippets once and read
    the serialization and external store contexts without entering the sandbox (see the
    module docstring). Activation, and so every line of workflow code, runs in the sandbox
    as before."""

    @classmethod
    def like(
        cls, existing: SandboxedWorkflowRunner, restrictions: SandboxRestrictions
    ) -> ContextsOutsideRunner:
        runner = cls(restrictions=restrictions, runner_class=existing.runner_class)
        runner.set_worker_level_failure_exception_types(
            existing._worker_level_failure_exception_types
        )
        return runner

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _ContextsOutsideInstance(det, self.runner_class, self.restrictions)


class _SharedCodeLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> CodeType | None:
        shared = SharedWorkflowCode.code.get(self.path)
        if shared is not None:
            return shared
        code = super().get_code(fullname)
        if code is not None:
            SharedWorkflowCode.code[self.path] = code
        return code


class SharedWorkflowCode(importlib.abc.MetaPathFinder):
    """Imports ``durable_loop`` and its workflow modules (what a sandbox imports again for
    every run) with one compiled code object per source file
    for the life of the process: a sandbox re-importing a workflow module executes the
    code it already has instead of reading and unmarshalling its ``.pyc`` again (about
    half the CPU and two thirds of the memory of a sandboxed workflow module)."""

    code: ClassVar[dict[str, CodeType]] = {}
    """Source path -> code object; code objects are immutable, so runs can share them."""

    @classmethod
    def install(cls) -> None:
        if not any(isinstance(f, cls) for f in sys.meta_path):
            sys.meta_path.insert(0, cls())

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != EVERYTHING and not fullname.startswith(WORKFLOW_PACKAGE):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        spec.loader = _SharedCodeLoader(spec.loader.name, spec.loader.path)
        return spec
