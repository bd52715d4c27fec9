"""Provider-level normalisation is on by default and can be turned off for strict reads."""

from durable_loop.core.activity_contracts import LlmTurnInput, TranscriptRef
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.transforms.defaults import (
    OPENAI_SHAPE,
    with_provider_normalization,
)
from durable_loop.core.transforms.names import TransformSet


def turn_input(provider: str, *, normalization: bool, transforms: TransformSet) -> LlmTurnInput:
    return LlmTurnInput(
        transcript=TranscriptRef(session_id="s", upto_seq=1),
        turn=1,
        assistant_seq=1,
        endpoint=LlmEndpoint(provider=provider, model="m"),
        transforms=transforms,
        provider_normalization=normalization,
    )


def test_openai_gets_shape_normalisation_before_session_transforms():
    own = TransformSet(response_transforms=["assistant_content_tool_call_tags_to_tool_calls"])
    effective = turn_input("openai", normalization=True, transforms=own).effective_transforms()
    assert effective.response_transforms == [
        *OPENAI_SHAPE.response_transforms,
        "assistant_content_tool_call_tags_to_tool_calls",
    ]
    assert effective.tool_call_transforms == OPENAI_SHAPE.tool_call_transforms


def test_normalisation_off_reads_strictly():
    own = TransformSet()
    assert turn_input("openai", normalization=False, transforms=own).effective_transforms() == own


def test_names_are_not_repeated_and_anthropic_gets_none():
    merged = with_provider_normalization(OPENAI_SHAPE, "openai")
    assert merged.response_transforms == OPENAI_SHAPE.response_transforms
    assert with_provider_normalization(TransformSet(), "anthropic") == TransformSet()
