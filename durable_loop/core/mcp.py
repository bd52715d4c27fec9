"""An MCP server as the worker is configured to reach it, and its coded failures (every
message names the server it is about). Secrets in the configuration stay ``${NAME}``
references until :func:`expand_all` fills them from the worker's environment."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.tools import ToolEffect


class McpServerError(ConfigError):
    """A server this worker cannot use (an ``MCP_*`` code says what failed); the message
    names the server, ``detail`` is what went wrong with it."""

    def __init__(self, code: ErrorCode, server: str, detail: str) -> None:
        super().__init__(f"MCP server {server!r}: {detail}", code=code)
        self.server = server
        self.detail = detail


_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class McpServerConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    required: bool = Field(
        default=True, description="A worker refuses to start if this server cannot be listed"
    )
    startup_timeout_s: float = Field(default=30.0, gt=0)
    timeout_s: float = Field(default=60.0, gt=0, description="Default timeout of its tools")
    tool_prefix: str | None = Field(
        default=None, description="Prefix of the model-facing names (default: the server name)"
    )
    include_tools: list[str] | None = Field(default=None, description="Original tool names")
    exclude_tools: list[str] = Field(default_factory=list)
    skip_invalid_tools: bool = Field(
        default=False,
        description="Leave out tools with malformed schemas instead of refusing the server",
    )
    dedupe: bool = False
    requires_approval: bool | list[str] = Field(
        default=False,
        description="Every call of this server's tools waits for a person (true), or the "
        "calls of the listed tools (original names)",
    )

    effect: ToolEffect | dict[str, ToolEffect] = Field(
        default="repeatable",
        description='"once" for every tool of this server, or original tool name -> effect: '
        "a call whose attempt died inside the server's tool is never re-run (it ends "
        "TOOL_CALL_IN_DOUBT)",
    )

    def effect_of(self, tool: str) -> ToolEffect:
        """The effect of ``tool`` (its original name)."""
        effect = self.effect
        return effect if isinstance(effect, str) else effect.get(tool, "repeatable")

    def gates(self, tool: str) -> bool:
        """Whether calls of ``tool`` (its original name) wait for a person's approval."""
        approval = self.requires_approval
        return approval if isinstance(approval, bool) else tool in approval

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError(f"server {self.name!r}: set exactly one of command (stdio) or url")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"server {self.name!r}: url must start with http:// or https://")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command else "http"

    def where(self) -> str:
        """A printable location that carries no secret (no env, no headers)."""
        if self.command:
            return " ".join([self.command, *self.args])
        return str(self.url)


def expand(value: str, environ: Mapping[str, str], server: str) -> str:
    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise McpServerError(
                ErrorCode.MCP_CONFIG_ERROR,
                server,
                f"${{{name}}} is referenced by the configuration but not set in the "
                "worker's environment",
            )
        return environ[name]

    return _REFERENCE.sub(substitute, value)


def expand_all(
    values: Mapping[str, str], environ: Mapping[str, str], server: str
) -> dict[str, str]:
    return {key: expand(value, environ, server) for key, value in values.items()}
