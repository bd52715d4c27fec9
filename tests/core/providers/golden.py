"""Loading the golden provider fixtures under tests/fixtures/providers/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from durable_loop.core.messages import Message
from durable_loop.core.plan import PromptPlan

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
PROVIDERS = ("openai", "anthropic", "gemini")


def load(provider: str, name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / provider / name).read_text())


def request_fixtures(provider: str) -> list[str]:
    return sorted(p.name for p in (FIXTURES / provider).glob("request_*.json"))


def conversation(model: str, ids: dict[str, str]) -> tuple[PromptPlan, list[Message]]:
    """The shared conversation with the provider's model name and call ids filled in."""
    text = (FIXTURES / "conversation.json").read_text().replace('"MODEL"', json.dumps(model))
    for placeholder, real in ids.items():
        text = text.replace(f'"{placeholder}"', json.dumps(real))
    data = json.loads(text)
    plan = PromptPlan.model_validate(data["plan"])
    return plan, [Message.model_validate(m) for m in data["messages"]]
