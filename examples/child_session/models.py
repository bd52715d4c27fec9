"""The example workflow's input and output (imported into the workflow sandbox as is)."""

from __future__ import annotations

from pydantic import BaseModel

from durable_loop import LlmEndpoint


class TriageRequest(BaseModel):
    ticket_id: str
    customer: str
    text: str
    llm: LlmEndpoint


class TriageOutcome(BaseModel):
    ticket_id: str
    priority: str
    customer_reply: str
    tools_called: list[str]
    turns: int
