"""The prompt plan: everything that shapes one LLM request, with a stable fingerprint."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from durable_loop.toolcalling.canonical_json import canonical_dumps, sha256_hex
from durable_loop.toolcalling.messages import Message
from durable_loop.toolcalling.tools import ToolSpec


class PromptPlan(BaseModel):
    model: str
    session_id: str
    upto_seq: int = Field(description="Reference to the transcript prefix this plan reads")
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: str | dict[str, JsonValue] | None = None
    llm_options: dict[str, JsonValue] = Field(default_factory=dict)

    def fingerprint(self, messages: list[Message]) -> str:
        """sha256 over the request surface: model, messages content, tools and options.

        The session id and seq are left out so two sessions fed the same inputs match.
        """
        surface: dict[str, JsonValue] = {
            "model": self.model,
            "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in messages],
            "tools": [
                t.model_dump(mode="json", include={"name", "description", "parameters"})
                for t in self.tools
            ],
            "tool_choice": self.tool_choice,
            "llm_options": self.llm_options,
        }
        return sha256_hex(canonical_dumps(surface))
