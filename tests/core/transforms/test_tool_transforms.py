"""The outbound tools transform, and how adapters leave an empty description out."""

from __future__ import annotations

from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan
from durable_loop.core.providers import ADAPTERS
from durable_loop.core.tools import ToolSpec
from durable_loop.core.transforms.outbound import (
    OutboundContext,
    openai_tools_strip_function_descriptions,
    tools_string_max_length_from_args_budget,
)
from durable_loop.core.transforms.pipeline import Outbound

TOOLS = [ToolSpec(name="add", description="Add two integers.", parameters={"type": "object"})]
NO_CONTEXT = OutboundContext()


def test_strip_function_descriptions():
    stripped = openai_tools_strip_function_descriptions(TOOLS, NO_CONTEXT)
    assert [t.description for t in stripped] == [""]
    assert stripped[0].parameters == TOOLS[0].parameters
    assert TOOLS[0].description == "Add two integers."


def test_every_adapter_leaves_the_stripped_description_out():
    plan = PromptPlan(
        model="m",
        session_id="s",
        upto_seq=0,
        tools=openai_tools_strip_function_descriptions(TOOLS, NO_CONTEXT),
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
    [hidden, untouched] = tools_hide_implicit_arguments([spec, TOOLS[0]], NO_CONTEXT)
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


NOTE_PATCH = ToolSpec(
    name="state_patch",
    parameters={
        "type": "object",
        "properties": {
            "ops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": ["add", "replace"]},
                        "path": {"type": "string", "maxLength": 64},
                        "value": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                        "label": {"type": ["string", "null"], "maxLength": 5_000},
                        "example": {"type": "object", "default": {"type": "string"}},
                    },
                },
            }
        },
    },
)


def test_string_max_length_caps_every_string_at_the_budget_keeping_smaller_ones():
    [capped] = tools_string_max_length_from_args_budget(
        [NOTE_PATCH], OutboundContext(max_args_bytes=400)
    )
    item = capped.parameters["properties"]["ops"]["items"]["properties"]
    assert item["op"] == {"type": "string", "enum": ["add", "replace"], "maxLength": 400}
    assert item["path"]["maxLength"] == 64
    assert item["value"]["anyOf"] == [{"type": "string", "maxLength": 400}, {"type": "integer"}]
    assert item["label"]["maxLength"] == 400
    assert item["example"] == {"type": "object", "default": {"type": "string"}}
    assert (
        "maxLength"
        not in NOTE_PATCH.parameters["properties"]["ops"]["items"]["properties"]["value"]["anyOf"][
            0
        ]
    )


def test_string_max_length_without_a_budget_sends_the_tools_as_they_are():
    assert tools_string_max_length_from_args_budget([NOTE_PATCH], NO_CONTEXT) == [NOTE_PATCH]


def test_the_capped_schema_is_what_the_plan_records_and_the_wire_carries():
    from durable_loop.core.transforms.names import TransformSet

    outbound = Outbound(
        TransformSet(tool_transforms=["tools_string_max_length_from_args_budget"]),
        OutboundContext(max_args_bytes=300),
    )
    tools, _ = outbound.before_plan([NOTE_PATCH], [Message.user("x")])
    plan = PromptPlan(model="m", session_id="s", upto_seq=0, tools=tools)
    body = outbound.encode(ADAPTERS["openai"], plan, [Message.user("x")]).body
    wired = body["tools"][0]["function"]["parameters"]["properties"]["ops"]["items"]
    assert wired["properties"]["value"]["anyOf"][0] == {"type": "string", "maxLength": 300}


def test_string_max_length_leaves_a_budget_the_reply_cannot_reach_out_of_the_prompt():
    """The schemas are printed into the prompt: a cap the token cap cannot reach changes
    only what the model reads, so it is not sent."""
    reachable = OutboundContext(max_args_bytes=400, max_reply_tokens=768)
    unreachable = OutboundContext(max_args_bytes=200_000, max_reply_tokens=768)
    unbounded = OutboundContext(max_args_bytes=200_000)
    assert tools_string_max_length_from_args_budget([NOTE_PATCH], unreachable) == [NOTE_PATCH]
    for ctx in (reachable, unbounded):
        [capped] = tools_string_max_length_from_args_budget([NOTE_PATCH], ctx)
        assert capped != NOTE_PATCH
