"""The valid transform names per application point, the set a request uses, and the
``transforms`` group of ``RuntimeConfig`` that configures it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from durable_loop.core.errors import ConfigError

MESSAGE_TRANSFORMS = (
    "assistant_tool_calls_content_null_if_blank",
    "assistant_tool_calls_reasoning_content_empty_if_missing",
    "assistant_tool_calls_signature_skip_validator_if_missing",
)
TOOL_TRANSFORMS = (
    "openai_tools_strip_function_descriptions",
    "tools_hide_implicit_arguments",
    "tools_string_max_length_from_args_budget",
)
RESPONSE_TRANSFORMS = (
    "assistant_function_call_to_tool_calls",
    "assistant_tool_calls_object_to_array",
    "assistant_tool_calls_arguments_json_string_if_hash",
    "assistant_content_tool_call_tags_to_tool_calls",
    "assistant_content_json_tool_calls_to_tool_calls",
)
TOOL_CALL_TRANSFORMS = ("assistant_tool_calls_arguments_blank_to_empty_object",)
TOOL_RESULT_TRANSFORMS = ("tool_result_compact_envelope",)

VALID_NAMES: dict[str, tuple[str, ...]] = {
    "message_transforms": MESSAGE_TRANSFORMS,
    "tool_transforms": TOOL_TRANSFORMS,
    "response_transforms": RESPONSE_TRANSFORMS,
    "tool_call_transforms": TOOL_CALL_TRANSFORMS,
    "tool_result_transforms": TOOL_RESULT_TRANSFORMS,
}


def check_names(setting: str, names: list[str]) -> list[str]:
    """Refuse unknown names (naming the valid ones); drop repeats, keep order."""
    valid = VALID_NAMES[setting]
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise ConfigError(
            f"unknown {setting} {unknown}; valid names: {', '.join(valid)}", show_code=True
        )
    return list(dict.fromkeys(names))


class TransformSet(BaseModel):
    """The transforms one LLM request applies, per point (see ``docs/providers.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    message_transforms: list[str] = Field(default_factory=list)
    tool_transforms: list[str] = Field(default_factory=list)
    response_transforms: list[str] = Field(default_factory=list)
    tool_call_transforms: list[str] = Field(default_factory=list)
    tool_result_transforms: list[str] = Field(default_factory=list)

    def all_names(self) -> list[str]:
        return [
            *self.message_transforms,
            *self.tool_transforms,
            *self.response_transforms,
            *self.tool_call_transforms,
            *self.tool_result_transforms,
        ]


class TransformsConfig(TransformSet):
    """The session's transforms (each list also accepts one comma-separated string) and
    whether the provider's own normalisation is applied before them."""

    provider_normalization: bool = Field(
        default=True,
        description="Apply the provider's shape normalisation transforms "
        "(core/transforms/defaults.py: OpenAI-compatible reply shapes, the Gemini "
        "signature shim); False reads replies strictly.",
    )

    @field_validator(*VALID_NAMES, mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator(*VALID_NAMES)
    @classmethod
    def _known(cls, value: list[str], info: ValidationInfo) -> list[str]:
        return check_names(str(info.field_name), value)

    def transform_set(self) -> TransformSet:
        """The lists alone, as an LLM request carries them."""
        return TransformSet.model_validate(self.model_dump(exclude={"provider_normalization"}))
