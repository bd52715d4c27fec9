"""Shape normalisation each provider gets unless a session turns it off.

OpenAI-compatible servers drift in shape (``tool_calls`` as an object, arguments as an
object, blank arguments, the legacy ``function_call``); these named transforms accept that
drift. Gemini requests get the thought-signature skip value on unsigned calls.
``RuntimeConfig.transforms.provider_normalization=False`` sends requests and reads replies strictly,
which is what the evaluation harness uses to show what each transform fixes. The table in
docs/providers.md lists these sets (a test keeps it equal).
"""

from __future__ import annotations

from durable_loop.core.transforms.names import TransformSet

OPENAI_COMPATIBLE_PROVIDERS = frozenset({"openai", "openrouter"})

OPENAI_SHAPE = TransformSet(
    response_transforms=[
        "assistant_function_call_to_tool_calls",
        "assistant_tool_calls_object_to_array",
        "assistant_tool_calls_arguments_json_string_if_hash",
    ],
    tool_call_transforms=["assistant_tool_calls_arguments_blank_to_empty_object"],
)
GEMINI_SHAPE = TransformSet(
    message_transforms=["assistant_tool_calls_signature_skip_validator_if_missing"]
)


def provider_normalization(provider: str) -> TransformSet:
    if provider in OPENAI_COMPATIBLE_PROVIDERS:
        return OPENAI_SHAPE
    if provider == "gemini":
        return GEMINI_SHAPE
    return TransformSet()


def _union(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def with_provider_normalization(configured: TransformSet, provider: str) -> TransformSet:
    """The provider's normalisation first, then the session's own transforms."""
    base = provider_normalization(provider)
    return TransformSet(
        message_transforms=_union(base.message_transforms, configured.message_transforms),
        tool_transforms=_union(base.tool_transforms, configured.tool_transforms),
        response_transforms=_union(base.response_transforms, configured.response_transforms),
        tool_call_transforms=_union(base.tool_call_transforms, configured.tool_call_transforms),
        tool_result_transforms=_union(
            base.tool_result_transforms, configured.tool_result_transforms
        ),
    )
