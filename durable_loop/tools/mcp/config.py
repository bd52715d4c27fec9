"""MCP server configuration, read by the worker (never by a workflow).

``mcp.toml``::

    [servers.files]
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
    env = { LOG_LEVEL = "warn" }

    [servers.search]
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
    timeout_s = 20

``${NAME}`` in ``env`` and ``headers`` values is replaced from the worker's environment when
the connection opens, so a secret stays in the environment: it is never written to this
file, to a tool spec, or to workflow history.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from durable_loop.core.mcp_errors import McpErrorCode, McpServerError
from durable_loop.tools.ensembles.descriptors import DescriptorProblem, EnsembleLoadError
from durable_loop.tools.ensembles.toml_lines import dotted, key_lines, line_of

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
                McpErrorCode.CONFIG,
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


class _McpFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, object]] = Field(default_factory=dict)


def load_mcp_config(path: str | Path) -> list[McpServerConfig]:
    """Read ``[servers.<name>]`` tables; every problem is reported with file, line, field."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problem = DescriptorProblem(file=str(file), field="(root)", message=f"invalid TOML: {err}")
        raise EnsembleLoadError([problem]) from None
    lines = key_lines(text)
    problems: list[DescriptorProblem] = []

    def report(err: ValidationError, prefix: tuple[str, ...]) -> None:
        for item in err.errors():
            where = (*prefix, *item["loc"])
            problems.append(
                DescriptorProblem(
                    file=str(file),
                    line=line_of(lines, where),
                    field=dotted(where),
                    message=item["msg"],
                )
            )

    servers: list[McpServerConfig] = []
    try:
        raw = _McpFile.model_validate(data).servers
    except ValidationError as err:
        report(err, ())
        raw = {}
    for name, body in raw.items():
        try:
            servers.append(McpServerConfig.model_validate({"name": name, **body}))
        except ValidationError as err:
            report(err, ("servers", name))
    if problems:
        raise EnsembleLoadError(problems)
    return servers
