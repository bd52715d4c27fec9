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

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durable_loop.core.mcp import McpServerConfig
from durable_loop.tools.ensembles.descriptors import DescriptorProblem, EnsembleLoadError
from durable_loop.tools.ensembles.toml_lines import dotted, key_lines, line_of


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
