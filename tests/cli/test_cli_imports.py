"""What a command imports decides how soon it answers (bench/cli_latency.py): ``--help``
and ``--version`` import no command module, no SDK and no Pydantic; a command that asks
Temporal one question imports neither the store, the worker, OpenTelemetry, the session
settings nor the workflow contracts (only the models of the answer it reads)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUN = """
import atexit, json, sys
path = sys.argv[1]
def dump():
    with open(path, "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(dump)
sys.argv = ["durable-loop", *sys.argv[2:]]
from durable_loop.console import main
main()
"""
HEAVY = (
    "sqlalchemy",
    "durable_loop.store",
    "durable_loop.worker.builder",
    "durable_loop.workflows.session",
    "durable_loop.activities",
    "durable_loop.core.config",
    "durable_loop.core.contracts",
    "durable_loop.client.sessions",
    "opentelemetry",
    "jsonschema",
    "httpx",
)


def modules_after(tmp_path: Path, *argv: str) -> tuple[list[str], subprocess.CompletedProcess]:
    dump = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(dump), *argv], capture_output=True, text=True, timeout=60
    )
    return json.loads(dump.read_text()), done


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_help_and_version_import_no_command_no_sdk_no_pydantic(tmp_path: Path, argv):
    modules, done = modules_after(tmp_path, *argv)
    assert done.returncode == 0, done.stderr
    ours = {m for m in modules if m.startswith("durable_loop")}
    assert ours <= {"durable_loop", "durable_loop.cli", "durable_loop.cli.app"} | {
        "durable_loop.cli.lazy",
        "durable_loop.console",
    }
    assert [m for m in modules if m.split(".")[0] in {"temporalio", "pydantic", "sqlalchemy"}] == []


@pytest.mark.parametrize(
    "argv",
    [
        ["tool-calls", "list", "s1"],
        ["pending"],
        ["pending", "s1"],
        ["proposals", "s1"],
        ["approve", "s1", "c1", "--as", "alice"],
        ["sessions"],
        ["status", "s1"],
    ],
)
def test_a_question_to_temporal_imports_no_store_worker_or_tracing(tmp_path: Path, argv):
    modules, done = modules_after(tmp_path, *argv, "--address", "127.0.0.1:1")
    assert done.returncode == 2 and "TEMPORAL_UNREACHABLE" in done.stderr, done.stderr
    assert "temporalio.client" in modules  # it did get as far as connecting
    assert [m for m in modules if m.startswith(HEAVY)] == []
