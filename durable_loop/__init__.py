"""durable-loop: durable, inspectable and safe LLM tool calling on Temporal.

The public face: everything a user needs imports from here (``from durable_loop import
SessionClient, SessionSettings, ToolRegistry``); ``__all__`` lists it.

Names load on first use (PEP 562): importing any ``durable_loop.core`` module, even inside
Temporal's workflow sandbox, runs this file first, and it must not pull in the client,
worker or store layers (temporalio.client, httpx, SQLAlchemy) on the way.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from durable_loop.client.codec.keys import KeyRing
    from durable_loop.client.connect import TemporalUnreachable, connect
    from durable_loop.client.history import fetch_histories
    from durable_loop.client.progress import Progress
    from durable_loop.client.proposals import ProposalClient, ProposalNotPending
    from durable_loop.client.sessions import SessionClient
    from durable_loop.client.settings import TemporalSettings
    from durable_loop.client.streaming import StreamEvent, send_streaming
    from durable_loop.client.tool_approvals import ToolApprovalClient, ToolCallNotPending
    from durable_loop.client.trace.models import Trace
    from durable_loop.client.tracing import TraceContextPropagation
    from durable_loop.core import presets
    from durable_loop.core.approvals import (
        ApprovalSettings,
        PendingToolCall,
        Remember,
        ToolApprovalList,
        ToolCallDecided,
        ToolCallDecision,
    )
    from durable_loop.core.budget import BudgetChange, BudgetChangeResult, SessionBudget
    from durable_loop.core.circuit import CircuitBreakerSettings
    from durable_loop.core.config import (
        LoopStrategy,
        RouterConfig,
        RuntimeConfig,
        SessionSettings,
        ToolFailurePolicy,
        ToolUseMode,
        WorkspaceSettings,
    )
    from durable_loop.core.contracts import (
        CarriedState,
        ChildSessionInput,
        ChildSessionResult,
        RunResult,
        SessionEnd,
        SessionStatus,
        SwitchModelResult,
        TailEntry,
        ToolOutcome,
        TranscriptTail,
        UserMessage,
    )
    from durable_loop.core.endpoint import ContextWindow, LlmEndpoint
    from durable_loop.core.envelope import Envelope
    from durable_loop.core.errors import CodedError, ConfigError, ErrorCode
    from durable_loop.core.messages import Message, ToolCall, Usage
    from durable_loop.core.proposals import (
        DecisionResult,
        PendingProposal,
        ProposalDecision,
        ProposalList,
    )
    from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry
    from durable_loop.core.retry import RetrySettings
    from durable_loop.core.sub_agent_config import SubAgentConfig
    from durable_loop.core.tools import ToolSpec
    from durable_loop.core.typed_output.parse import OutputUnavailable
    from durable_loop.store.engine import StoreConfig, open_store
    from durable_loop.store.stream import StreamStore
    from durable_loop.store.transcript import TranscriptStore
    from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
    from durable_loop.testing import reply, reply_anthropic, reply_gemini, reply_stream
    from durable_loop.testing.history import replay_failures
    from durable_loop.testing.scripted import ScriptedLLM
    from durable_loop.tools.ensembles.model import Ensemble, EnsembleDefaults, registry_from
    from durable_loop.tools.workspace import workspace_tools
    from durable_loop.worker.builder import WorkerTuning, build_tool_worker, build_worker
    from durable_loop.worker.deps import WorkerDeps, new_http_client
    from durable_loop.worker.plugin import DurableLoopPlugin
    from durable_loop.worker.run import run_worker
    from durable_loop.worker.settings import WorkerSettings
    from durable_loop.workflows.child_session import (
        ChildSessionWorkflow,
        run_child_session,
        start_child_session,
    )
    from durable_loop.workflows.session import SessionWorkflow

_EXPORTS: dict[str, tuple[str, ...]] = {
    # writing tools
    "durable_loop.core.registry": ("ToolContext", "ToolFailure", "ToolRegistry"),
    "durable_loop.core.tools": ("ToolSpec",),
    "durable_loop.core.sub_agent_config": ("SubAgentConfig",),
    "durable_loop.tools.ensembles.model": ("Ensemble", "EnsembleDefaults", "registry_from"),
    "durable_loop.tools.workspace": ("workspace_tools",),
    # settings
    "durable_loop.core.config": (
        "LoopStrategy",
        "RouterConfig",
        "RuntimeConfig",
        "SessionSettings",
        "ToolFailurePolicy",
        "ToolUseMode",
        "WorkspaceSettings",
    ),
    "durable_loop.core.endpoint": ("ContextWindow", "LlmEndpoint"),
    "durable_loop.core.circuit": ("CircuitBreakerSettings",),
    "durable_loop.core.retry": ("RetrySettings",),
    # results, messages and errors
    "durable_loop.core.contracts": (
        "CarriedState",
        "ChildSessionInput",
        "ChildSessionResult",
        "RunResult",
        "SessionEnd",
        "SessionStatus",
        "SwitchModelResult",
        "TailEntry",
        "ToolOutcome",
        "TranscriptTail",
        "UserMessage",
    ),
    "durable_loop.core.budget": ("BudgetChange", "BudgetChangeResult", "SessionBudget"),
    "durable_loop.core.messages": ("Message", "ToolCall", "Usage"),
    "durable_loop.core.envelope": ("Envelope",),
    "durable_loop.core.errors": ("CodedError", "ConfigError", "ErrorCode"),
    "durable_loop.core.typed_output.parse": ("OutputUnavailable",),
    "durable_loop.core.proposals": (
        "DecisionResult",
        "PendingProposal",
        "ProposalDecision",
        "ProposalList",
    ),
    "durable_loop.core.approvals": (
        "ApprovalSettings",
        "PendingToolCall",
        "Remember",
        "ToolApprovalList",
        "ToolCallDecided",
        "ToolCallDecision",
    ),
    # the client
    "durable_loop.client.progress": ("Progress",),
    "durable_loop.client.sessions": ("SessionClient",),
    "durable_loop.client.proposals": ("ProposalClient", "ProposalNotPending"),
    "durable_loop.client.tool_approvals": ("ToolApprovalClient", "ToolCallNotPending"),
    "durable_loop.client.streaming": ("StreamEvent", "send_streaming"),
    "durable_loop.client.connect": ("TemporalUnreachable", "connect"),
    "durable_loop.client.settings": ("TemporalSettings",),
    "durable_loop.client.codec.keys": ("KeyRing",),
    "durable_loop.client.trace.models": ("Trace",),
    "durable_loop.client.tracing": ("TraceContextPropagation",),
    # the store
    "durable_loop.store.engine": ("StoreConfig", "open_store"),
    "durable_loop.store.transcript": ("TranscriptStore",),
    "durable_loop.store.workspace": ("WorkspaceStore", "open_workspace_store"),
    "durable_loop.store.stream": ("StreamStore",),
    # the worker and the Temporal plugin
    "durable_loop.worker.builder": ("WorkerTuning", "build_tool_worker", "build_worker"),
    "durable_loop.worker.deps": ("WorkerDeps", "new_http_client"),
    "durable_loop.worker.plugin": ("DurableLoopPlugin",),
    "durable_loop.worker.settings": ("WorkerSettings",),
    "durable_loop.worker.run": ("run_worker",),
    # workflows, and sessions as child workflows of the user's own
    "durable_loop.workflows.session": ("SessionWorkflow",),
    "durable_loop.workflows.child_session": (
        "ChildSessionWorkflow",
        "run_child_session",
        "start_child_session",
    ),
    # testing
    "durable_loop.testing.scripted": ("ScriptedLLM",),
    "durable_loop.testing.history": ("replay_failures",),
    "durable_loop.client.history": ("fetch_histories",),
}

_MODULES: dict[str, str] = {
    "presets": "durable_loop.core.presets",
    "reply": "durable_loop.testing.reply",
    "reply_anthropic": "durable_loop.testing.reply_anthropic",
    "reply_gemini": "durable_loop.testing.reply_gemini",
    "reply_stream": "durable_loop.testing.reply_stream",
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
    "BudgetChange",
    "BudgetChangeResult",
    "CarriedState",
    "ChildSessionInput",
    "ChildSessionResult",
    "ChildSessionWorkflow",
    "CircuitBreakerSettings",
    "CodedError",
    "ConfigError",
    "ContextWindow",
    "DecisionResult",
    "DurableLoopPlugin",
    "Ensemble",
    "EnsembleDefaults",
    "Envelope",
    "ErrorCode",
    "KeyRing",
    "LlmEndpoint",
    "LoopStrategy",
    "Message",
    "OutputUnavailable",
    "PendingProposal",
    "PendingToolCall",
    "Progress",
    "ProposalClient",
    "ProposalDecision",
    "ProposalList",
    "ProposalNotPending",
    "Remember",
    "RetrySettings",
    "RouterConfig",
    "RunResult",
    "RuntimeConfig",
    "ScriptedLLM",
    "SessionBudget",
    "SessionClient",
    "SessionEnd",
    "SessionSettings",
    "SessionStatus",
    "SessionWorkflow",
    "StoreConfig",
    "StreamEvent",
    "StreamStore",
    "SubAgentConfig",
    "SwitchModelResult",
    "TailEntry",
    "TemporalSettings",
    "TemporalUnreachable",
    "ToolApprovalClient",
    "ToolApprovalList",
    "ToolCall",
    "ToolCallDecided",
    "ToolCallDecision",
    "ToolCallNotPending",
    "ToolContext",
    "ToolFailure",
    "ToolFailurePolicy",
    "ToolOutcome",
    "ToolRegistry",
    "ToolSpec",
    "ToolUseMode",
    "Trace",
    "TraceContextPropagation",
    "TranscriptStore",
    "TranscriptTail",
    "Usage",
    "UserMessage",
    "WorkerDeps",
    "WorkerSettings",
    "WorkerTuning",
    "WorkspaceSettings",
    "WorkspaceStore",
    "build_tool_worker",
    "build_worker",
    "connect",
    "fetch_histories",
    "new_http_client",
    "open_store",
    "open_workspace_store",
    "presets",
    "registry_from",
    "replay_failures",
    "reply",
    "reply_anthropic",
    "reply_gemini",
    "reply_stream",
    "run_child_session",
    "run_worker",
    "send_streaming",
    "start_child_session",
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
