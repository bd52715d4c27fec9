"""MCP servers as ensembles: list each server's tools into one ensemble per server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

import mcp.types as mcp_types
from pydantic import JsonValue

from durable_loop.activities.mcp import mcp_invoker
from durable_loop.activities.mcp_pool import McpPool
from durable_loop.core.errors import ErrorCode
from durable_loop.core.mcp import McpServerConfig, McpServerError
from durable_loop.core.registry import ToolRegistry
from durable_loop.core.tools import ToolSpec
from durable_loop.tools.ensembles.descriptors import schema_problems
from durable_loop.tools.ensembles.model import Ensemble, EnsembleDefaults
from durable_loop.tools.ensembles.toml_lines import dotted
from durable_loop.tools.mcp.naming import safe_tool_name, snake

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 1024


def _selected(config: McpServerConfig, tools: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
    wanted = None if config.include_tools is None else set(config.include_tools)
    return [
        t
        for t in tools
        if (wanted is None or t.name in wanted) and t.name not in config.exclude_tools
    ]


def _schema_errors(tool: mcp_types.Tool) -> list[str]:
    schema: dict[str, JsonValue] = tool.input_schema
    return [f"{dotted(where)}: {message}" for where, message in schema_problems(schema)]


def ensemble_for(
    pool: McpPool,
    config: McpServerConfig,
    tools: list[mcp_types.Tool],
    taken: set[str],
) -> tuple[Ensemble, dict[str, str]]:
    """One ensemble for one server, and the map model-facing name -> original name.

    Malformed schemas refuse the whole server (``MCP_BAD_SCHEMA``, naming the server and
    every bad tool) unless ``skip_invalid_tools`` leaves those tools out.
    """
    ensemble_name = snake(config.name) or "mcp"
    ensemble = Ensemble(
        ensemble_name,
        description=f"MCP server {config.name}",
        defaults=EnsembleDefaults(timeout_s=config.timeout_s, dedupe=config.dedupe),
    )
    bad: list[str] = []
    originals: dict[str, str] = {}
    prefix = config.tool_prefix if config.tool_prefix is not None else config.name
    for tool in _selected(config, tools):
        problems = _schema_errors(tool)
        if problems:
            bad.append(f"tool {tool.name!r}: {'; '.join(problems)}")
            continue
        name = safe_tool_name(prefix, tool.name, taken)
        spec = ToolSpec(
            name=name,
            original_name=tool.name if tool.name != name else None,
            description=(tool.description or tool.title or tool.name)[:MAX_DESCRIPTION],
            parameters=tool.input_schema,
            requires_approval=config.gates(tool.name),
            effect=config.effect_of(tool.name),
        )
        ensemble.add(spec, mcp_invoker(pool, config.name, tool.name), explicit=())
        originals[name] = tool.name
    if bad and not config.skip_invalid_tools:
        raise McpServerError(
            ErrorCode.MCP_BAD_SCHEMA,
            config.name,
            "malformed tool schemas: " + " | ".join(bad),
        )
    for line in bad:
        log.warning("MCP server %r: skipped %s", config.name, line)
    return ensemble, originals


async def mcp_ensembles(
    pool: McpPool, taken: Iterable[str] = ()
) -> tuple[list[Ensemble], dict[str, tuple[str, str]]]:
    """List every configured server into an ensemble.

    Returns the ensembles and the map model-facing name -> (server, original name). A
    server that fails is skipped with a warning when ``required = false``; otherwise its
    coded :class:`McpServerError` propagates.
    """
    names = set(taken)
    servers = list(pool.configs.values())
    listings = await asyncio.gather(
        *(pool.list_tools(c.name) for c in servers), return_exceptions=True
    )
    ensembles: list[Ensemble] = []
    mapping: dict[str, tuple[str, str]] = {}
    for config, listed in zip(servers, listings, strict=True):
        try:
            if isinstance(listed, BaseException):
                raise listed
            ensemble, originals = ensemble_for(pool, config, listed, names)
        except McpServerError as err:
            if config.required:
                raise
            log.warning("skipping optional MCP server: %s", err)
            continue
        ensembles.append(ensemble)
        mapping.update({name: (config.name, o) for name, o in originals.items()})
    return ensembles, mapping


async def mcp_registry(
    pool: McpPool, base: ToolRegistry | None = None
) -> tuple[ToolRegistry, dict[str, tuple[str, str]]]:
    """``base`` plus one ensemble per configured MCP server."""
    registry = base if base is not None else ToolRegistry()
    ensembles, mapping = await mcp_ensembles(pool, taken=registry.names())
    for ensemble in ensembles:
        ensemble.into(registry)
    return registry, mapping
