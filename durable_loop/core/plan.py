"""The prompt plan: everything that shapes one LLM request, with a stable fingerprint."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue
from pydantic_core import PydanticSerializationError

from durable_loop.core.canonical_json import canonical_dumps, sha256_hex
from durable_loop.core.messages import Message
from durable_loop.core.tools import ToolSpec


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
        """sha256 of the request surface: the messages actually sent (after the context
        window) plus everything above but the transcript reference.

        The session id and seq are left out so two sessions fed the same inputs match. The
        non-message surface is canonical JSON; each message is its own JSON (fields in
        model order), one per line: a per-message dict-and-sort pass cost ~15 % of an LLM
        activity at a few hundred messages.
        """
        surface: dict[str, JsonValue] = {
            "model": self.model,
            "provider": self.provider,
            "tools": [
                t.model_dump(mode="json", include={"name", "description", "parameters"})
                for t in self.tools
            ],
            "tool_choice": self.tool_choice,
            "llm_options": self.llm_options,
            "transforms": list(self.transforms),
        }
        lines = [canonical_dumps(surface)]
        lines += [_message_json(m) for m in messages]
        return sha256_hex("\n".join(lines))


def _message_json(message: Message) -> str:
    try:
        return message.model_dump_json(exclude_defaults=True)
    except PydanticSerializationError:  # a lone surrogate: not encodable as UTF-8
        return canonical_dumps(message.model_dump(mode="json", exclude_defaults=True))
