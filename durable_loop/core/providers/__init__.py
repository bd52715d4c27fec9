"""Provider adapters: pure conversions between canonical messages and wire shapes.

Adding a provider means adding one module here that implements :class:`ProviderAdapter`
and registering it in :data:`ADAPTERS` (see ``docs/providers.md``).
"""

from __future__ import annotations

from durable_loop.core.errors import ConfigError
from durable_loop.core.providers.anthropic import AnthropicAdapter
from durable_loop.core.providers.base import (
    ProviderAdapter,
    ProviderErrorReply,
    ProviderFormatError,
    ProviderReply,
    ProviderRequest,
)
from durable_loop.core.providers.gemini import GeminiAdapter
from durable_loop.core.providers.openai_compat import OpenAICompatAdapter

ADAPTERS: dict[str, ProviderAdapter] = {
    "openai": OpenAICompatAdapter(),
    "openrouter": OpenAICompatAdapter(),
    "anthropic": AnthropicAdapter(),
    "gemini": GeminiAdapter(),
}


def get_adapter(provider: str) -> ProviderAdapter:
    try:
        return ADAPTERS[provider]
    except KeyError:
        known = ", ".join(sorted(ADAPTERS))
        raise ConfigError(f"unknown provider {provider!r}; known providers: {known}") from None


__all__ = [
    "ADAPTERS",
    "ProviderAdapter",
    "ProviderErrorReply",
    "ProviderFormatError",
    "ProviderReply",
    "ProviderRequest",
    "get_adapter",
]
