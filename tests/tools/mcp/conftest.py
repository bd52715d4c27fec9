"""MCP servers for the tests: the npm reference servers (installed by .ci/run into
.mcp-servers/) and the toy server in tests/tools/mcp/servers, over stdio and streamable HTTP."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from durable_loop.tools.mcp import McpServerConfig

ROOT = Path(__file__).resolve().parents[3]
NODE_MODULES = ROOT / ".mcp-servers" / "node_modules"
EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
FILESYSTEM = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
TOY = Path(__file__).with_name("servers") / "toy_server.py"


def node_servers_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not EVERYTHING.exists() or not FILESYSTEM.exists():
        return "npm MCP servers not installed: run `npm ci --prefix .mcp-servers` (.ci/run does)"
    return None


needs_node = pytest.mark.skipif(
    node_servers_missing() is not None, reason=str(node_servers_missing())
)


def everything(**extra: object) -> McpServerConfig:
    return McpServerConfig(
        name="everything", command="node", args=[str(EVERYTHING), "stdio"], **extra
    )


def filesystem(root: Path, **extra: object) -> McpServerConfig:
    return McpServerConfig(name="files", command="node", args=[str(FILESYSTEM), str(root)], **extra)


def toy(mode: str = "normal", name: str = "toy", **extra: object) -> McpServerConfig:
    return McpServerConfig(
        name=name, command=sys.executable, args=[str(TOY), "--mode", mode], **extra
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def _serve(command: list[str], env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [part.replace("{port}", str(port)) for part in command],
        env={**os.environ, **{k: v.replace("{port}", str(port)) for k, v in env.items()}},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def toy_http_url() -> Iterator[str]:
    yield from _serve([sys.executable, str(TOY), "--http", "{port}"], {})


@pytest.fixture(scope="module")
def everything_http_url() -> Iterator[str]:
    if node_servers_missing():
        pytest.skip(str(node_servers_missing()))
    yield from _serve(["node", str(EVERYTHING), "streamableHttp"], {"PORT": "{port}"})
