"""What one router-pipeline message did, carried on its :class:`RunResult`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PipelineTrace(BaseModel):
    choice: Literal["call_tool", "clarify", "none"] | None = None
    tool: str | None = None
    router_ms: int = 0
    executor_ms: int = 0
    summarizer_ms: int = 0
    router_attempts: int = 0
    executor_attempts: int = 0
    repairs: list[str] = []
    ungrounded: list[str] = Field(
        default_factory=list,
        description="Required arguments the executor filled with digits the user never gave; "
        "the message asked for them instead of calling the tool",
    )
    clarify_overruled: bool = Field(
        default=False,
        description="The router asked for a value the message already held; the executor "
        "filled every required argument from the user's own words, and the tool was called",
    )
    deduplicated: bool = False
