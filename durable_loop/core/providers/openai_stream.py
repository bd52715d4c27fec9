"""Streaming chat completions (``stream: true``, server-sent events): the request change,
and an assembler that turns the ``chat.completion.chunk`` events back into one ordinary
``chat.completion`` body, so parsing, transforms and storage stay the same.

Tool-call deltas are merged by ``index`` (id and name arrive first, the arguments in
pieces), as the API reference describes.
"""

from __future__ import annotations

from pydantic import JsonValue

from durable_loop.core.providers.base import ProviderRequest

STREAMING_PROVIDERS = frozenset({"openai", "openrouter"})


def streaming_request(request: ProviderRequest) -> ProviderRequest:
    body: dict[str, JsonValue] = {
        **request.body,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return request.model_copy(update={"body": body})


class ChunkAssembler:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.usage: JsonValue = None
        self.timings: JsonValue = None
        self.seen_content = False

    def feed(self, event: dict[str, JsonValue]) -> str:
        """Take one event; return the text it adds (for the caller to stream on)."""
        if event.get("usage"):
            self.usage = event["usage"]
        if event.get("timings"):
            self.timings = event["timings"]
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self.finish = str(choice["finish_reason"])
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return ""
        for call in delta.get("tool_calls") or []:  # type: ignore[union-attr]
            if isinstance(call, dict):
                self._merge_call(call)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.seen_content = True
            self.text.append(content)
            return content
        return ""

    def _merge_call(self, call: dict[str, JsonValue]) -> None:
        index = call.get("index", 0)
        slot = self.calls.setdefault(index if isinstance(index, int) else 0, {"arguments": ""})
        if isinstance(call.get("id"), str):
            slot["id"] = str(call["id"])
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str):
                slot["name"] = slot.get("name", "") + str(function["name"])
            if isinstance(function.get("arguments"), str):
                slot["arguments"] += str(function["arguments"])

    def body(self) -> dict[str, JsonValue]:
        message: dict[str, JsonValue] = {
            "role": "assistant",
            "content": "".join(self.text) if self.seen_content else None,
        }
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": slot.get("id", ""),
                    "type": "function",
                    "function": {"name": slot.get("name", ""), "arguments": slot["arguments"]},
                }
                for _, slot in sorted(self.calls.items())
            ]
        return {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish}],
            "usage": self.usage,
            "timings": self.timings,
        }
