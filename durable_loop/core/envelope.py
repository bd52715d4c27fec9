"""The uniform tool result: ``{ok, data, warnings, errors:[{code, message}]}``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from durable_loop.core.canonical_json import canonical_dumps
from durable_loop.core.errors import CodedError, ErrorCode
from durable_loop.core.proposals import ProposalNotice


class Envelope(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: bool
    data: JsonValue = None
    warnings: list[str] = Field(default_factory=list)
    errors: list[CodedError] = Field(default_factory=list)
    deduplicated: bool = Field(
        default=False, description="Answered by the session-wide dedup of a dedupe=True tool"
    )
    reused: bool = Field(
        default=False, description="An earlier call's recorded result; the tool did not run"
    )
    proposal: ProposalNotice | None = Field(
        default=None,
        description="Set by a tool that proposed a change for a person to confirm; reaches "
        "the workflow as ToolRunOutput.proposal and is never part of the model's content",
    )

    @classmethod
    def success(cls, data: JsonValue = None, warnings: list[str] | None = None) -> Envelope:
        return cls(ok=True, data=data, warnings=warnings or [])

    @classmethod
    def failure(cls, code: ErrorCode | str, message: str, data: JsonValue = None) -> Envelope:
        return cls(ok=False, data=data, errors=[CodedError(code=str(code), message=message)])

    @property
    def error_codes(self) -> list[str]:
        return [e.code for e in self.errors]

    def to_content(self) -> str:
        """The JSON text the model reads as the tool result."""
        body = self.model_dump(mode="json", exclude_defaults=False)
        for flag in ("deduplicated", "reused"):
            if not body[flag]:
                body.pop(flag)
        body.pop("proposal")
        return canonical_dumps(body)
