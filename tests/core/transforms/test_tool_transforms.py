"""The outbound tools transform, and how adapters leave an empty description out."""

from __future__ import annotations

from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.outbound import openai_tools_strip_function_descriptions

TOOLS = [ToolSpec(name="add", description="Add two integers.", parameters={"type": "object"})]


def test_strip_function_descriptions():
    stripped = openai_tools_strip_function_descriptions(TOOLS)
    assert [t.description for t in stripped] == [""]
    assert stripped[0].parameters == TOOLS[0].parameters
    assert TOOLS[0].description == "Add two integers."


def test_every_adapter_leaves_the_stripped_description_out():
    plan = PromptPlan(
        model="m", session_id="s", upto_seq=0, tools=openai_tools_strip_function_descriptions(TOOLS)
    )
    openai = ADAPTERS["openai"].build_request(plan, [Message.user("x")]).body
    anthropic = ADAPTERS["anthropic"].build_request(plan, [Message.user("x")]).body
    gemini = ADAPTERS["gemini"].build_request(plan, [Message.user("x")]).body
    assert openai["tools"][0]["function"] == {"name": "add", "parameters": {"type": "object"}}
    assert "description" not in anthropic["tools"][0]
    assert "description" not in gemini["tools"][0]["functionDeclarations"][0]


def test_hide_implicit_arguments_removes_them_from_properties_and_required():
    from durable_loop.core.transforms.outbound import tools_hide_implicit_arguments

    spec = ToolSpec(
        name="state_get",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}, "workspace_id": {"type": "string"}},
            "required": ["path", "workspace_id"],
        },
        implicit_args=("workspace_id",),
    )
    [hidden, untouched] = tools_hide_implicit_arguments([spec, TOOLS[0]])
    assert hidden.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    assert untouched == TOOLS[0]
    assert "workspace_id" in spec.parameters["properties"]


def test_workspace_tools_declare_their_implicit_workspace_id():
    from durable_loop.tools.workspace import workspace_tools

    registry = workspace_tools(store=None)  # type: ignore[arg-type]
    assert {s.name: s.implicit_args for s in registry.specs()} == {
        "state_get": ("workspace_id",),
        "state_patch": ("workspace_id",),
        "facts_propose": ("workspace_id",),
    }
