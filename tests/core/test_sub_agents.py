"""Sub-agent configurations: what is refused when they are declared or the worker is
built, and the settings and result a parent hands its child."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.contracts import RunResult
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.errors import CodedError, ConfigError, ErrorCode
from durable_loop.core.messages import Usage
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.sub_agent_config import SubAgentConfig, task_parameters
from durable_loop.core.sub_agents import check_sub_agents, child_envelope, child_settings


def check(registry: ToolRegistry) -> None:
    check_sub_agents(registry.specs(), registry.sub_agents())


def lookup(query: str) -> str:
    """Look something up."""
    return query


def test_a_sub_agent_is_a_tool_taking_a_task():
    registry = ToolRegistry()
    spec = registry.add_sub_agent(SubAgentConfig(name="researcher", description="Finds things"))
    assert spec.sub_agent and spec.parameters == task_parameters()
    assert registry.names() == ["researcher"] and len(registry) == 1
    assert registry.get("researcher") is None  # no callable: it never reaches a tool activity
    assert registry.catalog().by_name()["researcher"].description == "Finds things"
    merged = ToolRegistry().merged(registry)
    assert [c.name for c in merged.sub_agents()] == ["researcher"]


def test_a_sub_agent_naming_itself_is_refused_when_declared():
    with pytest.raises(ConfigError) as refused:
        ToolRegistry().add_sub_agent(SubAgentConfig(name="loop", tools=["loop"]))
    assert refused.value.code == ErrorCode.INVALID_SETTING
    assert "lists itself" in str(refused.value)


def test_a_cycle_through_other_sub_agents_is_refused():
    registry = ToolRegistry()
    registry.add_sub_agent(SubAgentConfig(name="a", tools=["b"]))
    registry.add_sub_agent(SubAgentConfig(name="b", tools=["c"]))
    registry.add_sub_agent(SubAgentConfig(name="c", tools=["a"]))
    with pytest.raises(ConfigError) as refused:
        check(registry)
    assert refused.value.code == ErrorCode.INVALID_SETTING
    assert "a -> b -> c -> a" in str(refused.value)


def test_sub_agents_may_share_tools_and_nest_without_a_cycle():
    registry = ToolRegistry()
    registry.register(lookup)
    registry.add_sub_agent(SubAgentConfig(name="leaf", tools=["lookup"]))
    registry.add_sub_agent(SubAgentConfig(name="middle", tools=["leaf", "lookup"]))
    registry.add_sub_agent(SubAgentConfig(name="top", tools=["middle", "leaf"]))
    check(registry)


def test_an_unknown_tool_or_model_is_refused():
    unknown_tool = ToolRegistry()
    unknown_tool.add_sub_agent(SubAgentConfig(name="a", tools=["no_such_tool"]))
    with pytest.raises(ConfigError) as refused:
        check(unknown_tool)
    assert refused.value.code == ErrorCode.INVALID_SETTING
    assert "no_such_tool" in str(refused.value)

    unknown_model = ToolRegistry()
    unknown_model.add_sub_agent(SubAgentConfig(name="a", model="no-such-model"))
    with pytest.raises(ConfigError) as refused:
        check(unknown_model)
    assert refused.value.code == ErrorCode.INVALID_SETTING
    assert "no-such-model" in str(refused.value)

    known = ToolRegistry()
    known.add_sub_agent(SubAgentConfig(name="a", model="deepseek/deepseek-v3.2"))
    known.add_sub_agent(SubAgentConfig(name="b", llm=LlmEndpoint(model="anything-local")))
    check(known)


def test_an_output_schema_must_be_a_json_schema():
    with pytest.raises(ValidationError, match="output_schema is not a JSON Schema"):
        SubAgentConfig(name="a", output_schema={"type": "no-such-type"})
    config = SubAgentConfig(name="a", output_schema={"type": "object"})
    assert config.output_schema == {"type": "object"}


def parent(max_session_tokens: int | None) -> SessionSettings:
    return SessionSettings(
        llm=LlmEndpoint(model="parent-model"),
        runtime=RuntimeConfig(
            max_session_tokens=max_session_tokens, max_turns=7, tool_denylist=["x"]
        ),
        system_prompt="parent prompt",
    )


def test_the_child_budget_is_capped_by_what_the_parent_has_left():
    used = Usage(input_tokens=60, output_tokens=10)
    config = SubAgentConfig(name="a", max_session_tokens=500, tools=["lookup"], max_turns=3)
    settings = child_settings(parent(100), config, "p1", used)
    assert settings.runtime.max_session_tokens == 30
    assert child_settings(parent(None), config, "p1", used).runtime.max_session_tokens == 500
    unlimited = child_settings(parent(None), SubAgentConfig(name="a"), "p1", used)
    assert unlimited.runtime.max_session_tokens is None
    assert settings.runtime.tool_allowlist == ["lookup"] and settings.runtime.tool_denylist == []
    assert settings.runtime.max_turns == 3
    assert settings.system_prompt is None and settings.llm.model == "parent-model"
    assert settings.workspace.workspace_id == "p1"  # it works on the parent's workspace


def test_a_catalog_model_runs_on_the_parent_endpoint():
    config = SubAgentConfig(name="a", model="deepseek/deepseek-v3.2", system_prompt="be brief")
    settings = child_settings(parent(None), config, "p1", Usage())
    assert settings.llm.model == "deepseek/deepseek-v3.2"
    assert settings.llm.base_url == parent(None).llm.base_url
    assert settings.system_prompt == "be brief" and settings.title == "sub-agent a"


def test_the_envelope_is_the_reply_or_a_coded_failure_carrying_the_child_code():
    done = RunResult(message_id="m", status="completed", reply="Paris")
    assert child_envelope("c1", done).data == "Paris"
    failed = RunResult(
        message_id="m",
        status="failed",
        error=CodedError(code=ErrorCode.MAX_TURNS, message="no final answer after 1 turns"),
    )
    envelope = child_envelope("c1", failed)
    assert envelope.error_codes == [ErrorCode.SUB_AGENT_FAILED]
    assert envelope.data == {"session_id": "c1", "code": ErrorCode.MAX_TURNS}
    assert "no final answer" in envelope.errors[0].message
    missing = child_envelope("c1", None)
    assert missing.data == {"session_id": "c1", "code": ErrorCode.SUB_AGENT_FAILED}
