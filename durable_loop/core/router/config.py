"""Settings of the router -> executor pipeline (the ``router`` loop strategy)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RouterConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(
        default=None,
        description="Model for the router, executor and summarizer steps "
        "(default: the session's model, on the same endpoint)",
    )
    summarize: bool = Field(
        default=True,
        description="Turn the tool output into the answer with one more model pass (no tools); "
        "off: the reply is the tool output itself",
    )
    repair_attempts: int = Field(
        default=1, ge=0, le=3, description="Retries with a prompt quoting the error"
    )
    context_messages: int = Field(
        default=2,
        ge=0,
        le=20,
        description="Earlier text messages the router sees (e.g. the question it asked)",
    )
    max_output_bytes: int = Field(
        default=4_000, ge=256, description="Longest router/executor output kept; longer fails"
    )
    summary_input_bytes: int = Field(
        default=6_000, ge=256, description="Tool output shown to the summarizer, at most"
    )
    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=512, ge=16)
    json_mode: bool = Field(
        default=False,
        description='Ask the server for JSON output (OpenAI response_format "json_object")',
    )
