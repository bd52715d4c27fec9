"""MCP servers as tool sources: configuration, the worker's connection pool, ensembles."""

from durable_loop.activities.mcp_pool import McpPool
from durable_loop.core.mcp import McpServerConfig, McpServerError
from durable_loop.tools.mcp.config import load_mcp_config
from durable_loop.tools.mcp.tools import ensemble_for, mcp_ensembles, mcp_registry

__all__ = [
    "McpPool",
    "McpServerConfig",
    "McpServerError",
    "ensemble_for",
    "load_mcp_config",
    "mcp_ensembles",
    "mcp_registry",
]
