"""A sub-agent's configuration: another agent the model calls as a tool.

The application declares it (``ToolRegistry.add_sub_agent``); the model sees a tool taking
``{"task": "..."}``, and the session runs the call as a child workflow with this model,
prompt, tools and limits (see ``workflows/sub_agent_calls``). Pure: sandbox-safe.
"""

from __future__ import annotations

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from durable_loop.core.endpoint import LlmEndpoint

DEFAULT_MAX_SUB_AGENT_DEPTH = 3
TASK_ARGUMENT = "task"


def task_parameters() -> dict[str, JsonValue]:
    """The JSON schema of a sub-agent call's arguments."""
    return {
        "type": "object",
        "properties": {
            TASK_ARGUMENT: {
                "type": "string",
                "minLength": 1,
                "description": "What the sub-agent should do, with everything it needs to know",
            }
        },
        "required": [TASK_ARGUMENT],
        "additionalProperties": False,
    }


class SubAgentConfig(BaseModel):
    """Another agent the session's model can delegate a task to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The tool name the model calls (snake_case)")
    description: str = Field(default="", description="What the model reads about it")
    llm: LlmEndpoint | None = Field(
        default=None, description="Its own endpoint and model (default: the parent's endpoint)"
    )
    model: str | None = Field(
        default=None,
        description="A model of the catalog, served by the parent's endpoint (ignored with llm)",
    )
    system_prompt: str | None = None
    tools: list[str] = Field(
        default_factory=list,
        description="Names of the worker's tools (or other sub-agents) it may call",
    )
    max_turns: int | None = Field(default=None, ge=1, description="Default: the parent's")
    max_session_tokens: int | None = Field(
        default=None, ge=1, description="Its own budget; always capped by what the parent has left"
    )
    output_schema: dict[str, JsonValue] | None = Field(
        default=None, description="A JSON Schema its final answer must satisfy"
    )

    @field_validator("output_schema")
    @classmethod
    def _schema(cls, value: dict[str, JsonValue] | None) -> dict[str, JsonValue] | None:
        if value is not None:
            try:
                Draft202012Validator.check_schema(value)
            except SchemaError as err:
                raise ValueError(f"output_schema is not a JSON Schema: {err.message}") from err
        return value
