"""Sub-agents: checking their configurations, and what a parent hands its child.

Configuration errors (an unknown tool or model, a sub-agent reaching itself directly or
through others) are refused when the worker is built, with ``INVALID_SETTING``; depth
is checked at run time (``max_sub_agent_depth``), since it depends on where a session
sits. Pure: sandbox-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from durable_loop.core.approvals import PendingToolCall, ToolCallDecided
from durable_loop.core.catalog import CATALOG, CatalogEntry
from durable_loop.core.config import SessionSettings
from durable_loop.core.contracts import ChildSessionInput, RunResult, UserMessage
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.envelope import Envelope
from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.messages import Usage
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.core.tools import ToolSpec

SUB_AGENT_WORKFLOW = "SubAgent"
SIGNAL_SUB_AGENT_APPROVALS = "sub_agent_approvals"
SIGNAL_SUB_AGENT_CANCEL = "cancel_task"
MEMO_PARENT_SESSION = "parent_session_id"
MEMO_SUB_AGENT = "sub_agent"


def catalog_entry(model: str) -> CatalogEntry | None:
    """The catalog entry named ``model`` (any provider), or None."""
    wanted = model.lower()
    return next((e for e in CATALOG if wanted in e.names()), None)


def _refuse(message: str) -> ConfigError:
    return ConfigError(message, code=ErrorCode.INVALID_SETTING, show_code=True)


def check_sub_agents(specs: Iterable[ToolSpec], configs: Iterable[SubAgentConfig]) -> None:
    """Refuse sub-agents whose tools or model are unknown, or that reach themselves."""
    by_name = {s.name: s for s in specs}
    agents = {c.name: c for c in configs}
    for name, config in agents.items():
        unknown = [t for t in config.tools if t not in by_name]
        if unknown:
            raise _refuse(
                f"sub-agent {name!r} names tools the worker does not have: {', '.join(unknown)}"
            )
        if config.llm is None and config.model is not None and not catalog_entry(config.model):
            raise _refuse(
                f"sub-agent {name!r} names model {config.model!r}, which is not in the model "
                "catalog; give it an llm endpoint instead"
            )
    for name in agents:
        cycle = _cycle_from(name, agents, [name])
        if cycle:
            raise _refuse(f"sub-agent {name!r} reaches itself: {' -> '.join(cycle)}")


def _cycle_from(
    name: str, agents: Mapping[str, SubAgentConfig], path: list[str]
) -> list[str] | None:
    for tool in agents[name].tools:
        if tool == path[0]:
            return [*path, tool]
        if tool in agents and tool not in path:
            found = _cycle_from(tool, agents, [*path, tool])
            if found:
                return found
    return None


class SubAgentInput(BaseModel):
    """The start input of a sub-agent's child workflow."""

    session: ChildSessionInput
    depth: int = Field(ge=1, description="1 for a session's own sub-agents")
    parent_workflow_id: str
    parent_session_id: str
    call_id: str
    sub_agent: str


class SubAgentApprovals(BaseModel):
    """A sub-agent's held tool calls (its own and its sub-agents'), signalled to its parent
    whenever they change, so the parent's ``tool_approvals`` Query lists them."""

    session_id: str
    pending: list[PendingToolCall] = Field(default_factory=list)
    decided: list[ToolCallDecided] = Field(default_factory=list)


def child_session_id(parent_session_id: str, call_id: str, result_seq: int) -> str:
    """Deterministic, and unique within the parent (a model may reuse a call id)."""
    return f"{parent_session_id}--{call_id}-{result_seq}"


def child_endpoint(parent: SessionSettings, config: SubAgentConfig) -> LlmEndpoint:
    if config.llm is not None:
        return config.llm
    if config.model is not None:
        return parent.llm.model_copy(update={"model": config.model})
    return parent.llm


def remaining_tokens(parent: SessionSettings, used: Usage) -> int | None:
    limit = parent.runtime.max_session_tokens
    return None if limit is None else limit - used.total_tokens


def child_settings(
    parent: SessionSettings, config: SubAgentConfig, parent_session_id: str, parent_used: Usage
) -> SessionSettings:
    """The child's settings: its own model, prompt, tools and limits; the parent's loop
    settings, approval rules and workspace otherwise. Its token budget is capped by what
    the parent has left."""
    budgets = [b for b in (config.max_session_tokens, remaining_tokens(parent, parent_used)) if b]
    runtime = parent.runtime.model_copy(
        update={
            "tool_allowlist": list(config.tools),
            "tool_denylist": [],
            "max_turns": config.max_turns or parent.runtime.max_turns,
            "max_session_tokens": min(budgets) if budgets else None,
        }
    )
    same_model = config.llm is None and config.model is None
    return parent.model_copy(
        update={
            "llm": child_endpoint(parent, config),
            "fallback_llms": parent.fallback_llms if same_model else [],
            "runtime": runtime,
            "system_prompt": config.system_prompt,
            "title": f"sub-agent {config.name}",
            "workspace": parent.workspace.model_copy(
                update={"workspace_id": parent.workspace.workspace_id or parent_session_id}
            ),
        }
    )


def child_message(task: str, config: SubAgentConfig, message_id: str) -> UserMessage:
    """The one message a sub-agent answers, typed when the configuration has an
    ``output_schema`` (checked when the configuration was built)."""
    return UserMessage(text=task, message_id=message_id, output_schema=config.output_schema)


def child_envelope(child_session: str, result: RunResult | None) -> Envelope:
    """The parent's tool result: the child's reply, or a coded failure the model can act
    on (``SUB_AGENT_FAILED`` carrying the child's own code)."""
    if result is not None and result.status == "completed" and result.error is None:
        return Envelope.success(result.output if result.output is not None else result.reply)
    if result is None:
        code, detail = ErrorCode.SUB_AGENT_FAILED.value, "it gave no result"
    else:
        error = result.error
        code = error.code if error else ErrorCode.SUB_AGENT_FAILED.value
        detail = f"{result.status}: {error.message}" if error else result.status
    return Envelope.failure(
        ErrorCode.SUB_AGENT_FAILED,
        f"the sub-agent did not finish its task ({detail})",
        data={"session_id": child_session, "code": code},
    )
