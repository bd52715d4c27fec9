"""The request options of the router pipeline's model calls: the session's
``request_overrides`` first, then the router's own sampling settings over them."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from durable_loop.core.config import RouterConfig


def step_options(
    router: RouterConfig, request_overrides: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """Options of a router or executor request."""
    options: dict[str, JsonValue] = dict(request_overrides)
    if router.temperature is not None:
        options["temperature"] = router.temperature
    if router.max_tokens is not None:
        options["max_tokens"] = router.max_tokens
    if router.json_mode:
        options["response_format"] = {"type": "json_object"}
    return options


def answer_options(
    router: RouterConfig, request_overrides: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """Options of the reply request: free text, so no JSON response format."""
    options = step_options(router, request_overrides)
    return {k: v for k, v in options.items() if k != "response_format"}
