"""The prompt plan: everything that shapes one LLM request, with a stable fingerprint."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from durable_loop.toolcalling.canonical_json import canonical_dumps, sha256_hex
from durable_loop.toolcalling.messages import Message
from durable_loop.toolcalling.tools import ToolSpec


class PromptPlan(BaseModel):
    """One request's surface: a reference to the transcript prefix it reads, the tool
    definitions actually sent (after masking and tool transforms), tool_choice, and every
    request option (``llm_options``: sampling, limits, provider knobs)."""

    model: str
    provider: str = "openai"
    session_id: str
    upto_seq: int = Field(description="Reference to the transcript prefix this plan reads")
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: str | dict[str, JsonValue] | None = None
    llm_options: dict[str, JsonValue] = Field(default_factory=dict)
    transforms: list[str] = Field(
        default_factory=list, description="Names of the transforms this request applies"
    )

    def fingerprint(self, messages: list[Message]) -> str:
        """sha256 of the canonical JSON of the request surface: the messages actually sent
        (after the context window) plus everything above but the transcript reference.

        The session id and seq are left out so two sessions fed the same inputs match.
        """
        surface: dict[str, JsonValue] = {
            "model": self.model,
            "provider": self.provider,
            "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in messages],
            "tools": [
                t.model_dump(mode="json", include={"name", "description", "parameters"})
                for t in self.tools
            ],
            "tool_choice": self.tool_choice,
            "llm_options": self.llm_options,
            "transforms": list(self.transforms),
        }
        return sha256_hex(canonical_dumps(surface))
