"""The embedded dev server: library API and the `durable-loop server` command."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.cli.binaries import temporal_cli
from durable_loop.cli.devserver import (
    DYNAMIC_CONFIG,
    DevServerError,
    dev_server_command,
    dynamic_config_args,
    free_port,
    port_is_free,
    start_dev_server,
)
from durable_loop.client.settings import TemporalSettings
from durable_loop.console import app

CLI = [sys.executable, "-m", "durable_loop"]


def test_start_persist_and_stop(tmp_path: Path):
    port, ui_port = free_port(), free_port()
    with start_dev_server(
        tmp_path, port=port, ui_port=ui_port, search_attributes={"DlTopic": "Keyword"}
    ) as dev:
        assert dev.address == f"127.0.0.1:{port}"
        assert dev.ui_url == f"http://127.0.0.1:{ui_port}"
        assert urllib.request.urlopen(dev.ui_url, timeout=5).status == 200
        with pytest.raises(DevServerError, match=f"port 127.0.0.1:{port} is already in use"):
            start_dev_server(tmp_path / "other", port=port, ui_port=free_port())
        process = dev.process
    assert process.poll() is not None
    assert (tmp_path / "temporal.db").stat().st_size > 0
    assert port_is_free(port) and port_is_free(ui_port)
    with start_dev_server(
        tmp_path, port=port, ui_port=ui_port, search_attributes={"DlTopic": "Keyword"}
    ) as again:
        assert again.running()
        missing = CliRunner().invoke(
            app, ["trace", "s1", "--address", again.address, "-n", "nosuch", "--no-store"]
        )
        assert missing.exit_code == 2
        assert missing.stderr.strip() == (
            "error: NAMESPACE_NOT_FOUND: Namespace nosuch is not found: "
            "create it or set TEMPORAL_NAMESPACE"
        )


def test_every_dev_server_reads_history_queues_without_the_20_per_second_cap(tmp_path: Path):
    """Stock settings hold each task ~40 ms in history once 20 reads/s are spent
    (bench/dev_server_latency.py); the server we start, and the in-memory one of tests,
    evals and benchmarks, get the raised limits."""
    assert DYNAMIC_CONFIG["history.transferProcessorMaxPollRPS"] >= 1000
    args = dynamic_config_args()
    assert args[:2] == ["--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000"]
    assert len(args) == 2 * len(DYNAMIC_CONFIG)
    cmd = dev_server_command(
        "temporal",
        tmp_path / "t.db",
        port=1,
        ui_port=2,
        namespace="default",
        search_attributes=None,
        log_level="warn",
    )
    assert cmd[-len(args) :] == args
    assert dynamic_config_args({}) == []


def test_early_exit_is_reported_with_the_log(tmp_path: Path):
    with pytest.raises(DevServerError, match="exited with code"):
        start_dev_server(tmp_path, port=free_port(), ui_port=free_port(), log_level="bogus")


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux: /proc). A thread that ends while its task
    directory is read is skipped: its children, if any, went to the process."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return found


def gone(pid: int) -> bool:
    """Exited and reaped (a zombie still holds nothing, but its parent did not wait)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _read_until(process: subprocess.Popen[str], marker: str, timeout_s: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if marker in line:
            return lines
    raise AssertionError(f"{marker!r} not printed; got {lines}")


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_server_command_runs_until_signalled(tmp_path: Path, stop_signal: signal.Signals):
    port, ui_port = free_port(), free_port()
    state = tmp_path / "state"
    process = subprocess.Popen(
        [
            *CLI,
            "server",
            "--port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--state-dir",
            str(state),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = _read_until(process, "CLI:", timeout_s=60)
        ui_url = lines[-2].split("Web UI:")[1].strip()
        assert ui_url == f"http://127.0.0.1:{ui_port}"
        assert any(f"gRPC:   127.0.0.1:{port}" in line for line in lines)
        cli = lines[-1].split("CLI:")[1].split()
        assert cli[0] == temporal_cli() and os.access(cli[0], os.X_OK)
        assert cli[1:4] == ["--address", f"127.0.0.1:{port}", "workflow"]
        [dev_server] = children_of(process.pid)
        assert urllib.request.urlopen(ui_url, timeout=5).status == 200
        assert TemporalSettings(address=f"127.0.0.1:{port}").ui_url(state) == ui_url
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        process.send_signal(stop_signal)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "Stopped." in out
    assert gone(dev_server), "the dev server outlived the command"
    assert (state / "temporal.db").is_file()
    assert port_is_free(port) and port_is_free(ui_port), "the dev server outlived the command"
    assert TemporalSettings(address=f"127.0.0.1:{port}").ui_url(state) is None
