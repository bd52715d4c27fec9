"""durable-loop: durable, inspectable and safe LLM tool calling on Temporal.

The public face: what an application writes against imports from here (``from
durable_loop import SessionClient, SessionSettings, ToolRegistry``); ``__all__`` lists it,
at most 50 names. Test helpers (``ScriptedLLM``, ``reply``, ``replay_failures``) import
from ``durable_loop.testing``; every other name from the module that defines it.

Names load on first use (PEP 562): importing any ``durable_loop.core`` module, even inside
Temporal's workflow sandbox, runs this file first, and it must not pull in the client,
worker or store layers (temporalio.client, httpx, SQLAlchemy) on the way.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from durable_loop.client.connect import TemporalUnreachable, connect
    from durable_loop.client.proposals import ProposalNotPending
    from durable_loop.client.sessions import SessionClient
    from durable_loop.client.settings import TemporalSettings
    from durable_loop.client.streaming import StreamEvent
    from durable_loop.client.tool_approvals import ToolCallNotPending
    from durable_loop.core import presets
    from durable_loop.core.approvals import (
        ApprovalSettings,
        PendingToolCall,
        Remember,
        ToolCallDecision,
    )
    from durable_loop.core.circuit import CircuitBreakerSettings
    from durable_loop.core.config import (
        RouterConfig,
        RuntimeConfig,
        SessionSettings,
        WorkspaceSettings,
    )
    from durable_loop.core.contracts import ChildSessionResult, RunResult, SessionStatus
    from durable_loop.core.endpoint import ContextWindow, LlmEndpoint
    from durable_loop.core.errors import CodedError, ConfigError, DurableLoopError, ErrorCode
    from durable_loop.core.proposals import PendingProposal, ProposalDecision
    from durable_loop.core.registry import Reconciled, ToolContext, ToolFailure, ToolRegistry
    from durable_loop.core.retry import RetrySettings
    from durable_loop.core.sub_agent_config import SubAgentConfig
    from durable_loop.core.tools import ToolSpec
    from durable_loop.core.typed_output.parse import OutputUnavailable
    from durable_loop.store.engine import StoreConfig, open_store
    from durable_loop.store.stream import StreamStore
    from durable_loop.store.workspace import open_workspace_store
    from durable_loop.tools.ensembles.model import Ensemble, EnsembleDefaults, registry_from
    from durable_loop.tools.workspace import workspace_tools
    from durable_loop.worker.builder import WorkerTuning, build_worker
    from durable_loop.worker.deps import WorkerDeps
    from durable_loop.worker.plugin import DurableLoopPlugin
    from durable_loop.workflows.child_session import run_child_session

# What an application writes against, and no more (tests/test_public_face.py bounds it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    # writing tools
    "durable_loop.core.registry": ("Reconciled", "ToolContext", "ToolFailure", "ToolRegistry"),
    "durable_loop.core.tools": ("ToolSpec",),
    "durable_loop.core.sub_agent_config": ("SubAgentConfig",),
    "durable_loop.tools.ensembles.model": ("Ensemble", "EnsembleDefaults", "registry_from"),
    "durable_loop.tools.workspace": ("workspace_tools",),
    # settings
    "durable_loop.core.config": (
        "RouterConfig",
        "RuntimeConfig",
        "SessionSettings",
        "WorkspaceSettings",
    ),
    "durable_loop.core.endpoint": ("ContextWindow", "LlmEndpoint"),
    "durable_loop.core.circuit": ("CircuitBreakerSettings",),
    "durable_loop.core.retry": ("RetrySettings",),
    "durable_loop.core.approvals": (
        "ApprovalSettings",
        "PendingToolCall",
        "Remember",
        "ToolCallDecision",
    ),
    # results and errors
    "durable_loop.core.contracts": ("ChildSessionResult", "RunResult", "SessionStatus"),
    "durable_loop.core.errors": ("CodedError", "ConfigError", "DurableLoopError", "ErrorCode"),
    "durable_loop.core.typed_output.parse": ("OutputUnavailable",),
    "durable_loop.core.proposals": ("PendingProposal", "ProposalDecision"),
    # the client
    "durable_loop.client.sessions": ("SessionClient",),
    "durable_loop.client.proposals": ("ProposalNotPending",),
    "durable_loop.client.tool_approvals": ("ToolCallNotPending",),
    "durable_loop.client.streaming": ("StreamEvent",),
    "durable_loop.client.connect": ("TemporalUnreachable", "connect"),
    "durable_loop.client.settings": ("TemporalSettings",),
    # the store
    "durable_loop.store.engine": ("StoreConfig", "open_store"),
    "durable_loop.store.workspace": ("open_workspace_store",),
    "durable_loop.store.stream": ("StreamStore",),
    # the worker and the Temporal plugin
    "durable_loop.worker.builder": ("WorkerTuning", "build_worker"),
    "durable_loop.worker.deps": ("WorkerDeps",),
    "durable_loop.worker.plugin": ("DurableLoopPlugin",),
    # sessions as child workflows of the user's own
    "durable_loop.workflows.child_session": ("run_child_session",),
}

_MODULES: dict[str, str] = {
    "presets": "durable_loop.core.presets",
}


def _where(name: str) -> str | None:
    """The module ``name`` is exported from. Looked up rather than tabled at import: the
    workflow sandbox executes this package again for every workflow run, and a table
    would be built (and held by the run) each time for nothing."""
    if name in _MODULES:
        return _MODULES[name]
    return next((module for module, names in _EXPORTS.items() if name in names), None)


__all__ = (
    "ApprovalSettings",
    "ChildSessionResult",
    "CircuitBreakerSettings",
    "CodedError",
    "ConfigError",
    "ContextWindow",
    "DurableLoopError",
    "DurableLoopPlugin",
    "Ensemble",
    "EnsembleDefaults",
    "ErrorCode",
    "LlmEndpoint",
    "OutputUnavailable",
    "PendingProposal",
    "PendingToolCall",
    "ProposalDecision",
    "ProposalNotPending",
    "Reconciled",
    "Remember",
    "RetrySettings",
    "RouterConfig",
    "RunResult",
    "RuntimeConfig",
    "SessionClient",
    "SessionSettings",
    "SessionStatus",
    "StoreConfig",
    "StreamEvent",
    "StreamStore",
    "SubAgentConfig",
    "TemporalSettings",
    "TemporalUnreachable",
    "ToolCallDecision",
    "ToolCallNotPending",
    "ToolContext",
    "ToolFailure",
    "ToolRegistry",
    "ToolSpec",
    "WorkerDeps",
    "WorkerTuning",
    "WorkspaceSettings",
    "build_worker",
    "connect",
    "open_store",
    "open_workspace_store",
    "presets",
    "registry_from",
    "run_child_session",
    "workspace_tools",
)


def __getattr__(name: str) -> Any:
    path = _where(name)
    if path is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # ``__import__``, not importlib: inside the workflow sandbox it is the sandbox's import,
    # which honours the modules passed through (one class per model, shared with the host).
    __import__(path)
    module = sys.modules[path]
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
