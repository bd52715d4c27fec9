"""`durable-loop demo` wiring: the LLM from DURABLE_LOOP_LLM_* variables, the embedded dev
server, an in-process worker, the trace and the PASS/FAIL verdict."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.cli.devserver import free_port, port_is_free
from durable_loop.cli.errors import CliError
from durable_loop.console import app
from durable_loop.demo.command import LLM_TIMEOUT_S, endpoint_from_env
from tests.cli.test_devserver import CLI, _read_until, children_of, gone
from tests.conftest import unique
from tests.demo.small_model import small_model


def test_endpoint_from_environment():
    assert endpoint_from_env({}) is None
    endpoint = endpoint_from_env(
        {
            "DURABLE_LOOP_LLM_BASE_URL": "https://llm.example/",
            "DURABLE_LOOP_LLM_MODEL": "some/model",
            "DURABLE_LOOP_LLM_API_KEY_ENV": "EXAMPLE_KEY",
            "DURABLE_LOOP_LLM_API_PREFIX": "api/v1",
        }
    )
    assert endpoint is not None
    assert (endpoint.base_url, endpoint.api_prefix) == ("https://llm.example", "/api/v1")
    assert (endpoint.model, endpoint.api_key_env) == ("some/model", "EXAMPLE_KEY")
    assert endpoint.timeout_s == LLM_TIMEOUT_S


def test_base_url_without_a_model_is_refused():
    with pytest.raises(CliError) as caught:
        endpoint_from_env({"DURABLE_LOOP_LLM_BASE_URL": "http://127.0.0.1:9"})
    assert caught.value.code == "CONFIG_ERROR"
    assert "DURABLE_LOOP_LLM_MODEL" in caught.value.message


def test_demo_command_end_to_end_on_an_endpoint_from_the_environment(tmp_path: Path, scripted_llm):
    model = unique("hosted-model")
    scripted_llm.script(model, [], then=small_model)
    port, ui_port = free_port(), free_port()
    env = {"DURABLE_LOOP_LLM_BASE_URL": scripted_llm.base_url, "DURABLE_LOOP_LLM_MODEL": model}
    args = ["demo", "--state-dir", str(tmp_path), "--port", str(port), "--ui-port", str(ui_port)]
    result = CliRunner().invoke(app, [*args, "--no-wait"], env=env)
    assert result.exit_code == 0, (result.output, result.exception)
    out = result.stdout
    assert f"LLM: {model} at {scripted_llm.base_url}/v1" in out
    assert "      calculate → 441" in out
    assert "assistant: The result of 23 * 19 + 4 is 441." in out
    assert "ok   a note holding 441 was saved" in out
    assert "tokens in/out" in out, "the trace table is printed"
    assert f"Web UI: http://127.0.0.1:{ui_port}/namespaces/default/workflows/session-demo-" in out
    assert out.rstrip().endswith("`durable-loop server` reopens the UI.")
    assert "demo: PASS" in out
    assert port_is_free(port), "the dev server was stopped"
    assert (tmp_path / "durable-loop.db").is_file() and (tmp_path / "temporal.db").is_file()


def test_demo_command_fails_with_exit_code_1_on_a_wrong_answer(tmp_path: Path, scripted_llm):
    from durable_loop.testing import reply

    model = unique("hosted-model")
    scripted_llm.script(model, [], then=reply.text("About 400."))
    env = {"DURABLE_LOOP_LLM_BASE_URL": scripted_llm.base_url, "DURABLE_LOOP_LLM_MODEL": model}
    args = ["demo", "--state-dir", str(tmp_path), "--port", str(free_port())]
    result = CliRunner().invoke(app, [*args, "--ui-port", str(free_port()), "--no-wait"], env=env)
    assert result.exit_code == 1, (result.output, result.exception)
    assert "FAIL reply 1 states 441 — About 400." in result.stdout
    assert "demo: FAIL" in result.stdout


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_a_stopped_demo_stops_its_dev_server_first(tmp_path: Path, stop_signal: signal.Signals):
    """Stopped mid-session (a model that never answers), as a supervisor or Ctrl-C stops
    it, the demo stops the dev server it started and waits for it: when the command has
    exited, the server is gone and its ports are free. Under Python's default SIGTERM the
    command died at once and the server was still shutting down, holding its ports."""
    silent = socket.socket()  # accepts connections into its backlog, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port, ui_port = free_port(), free_port()
    env = {
        **os.environ,
        "DURABLE_LOOP_LLM_BASE_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
        "DURABLE_LOOP_LLM_MODEL": "silent-model",
        "PYTHONUNBUFFERED": "1",
    }
    args = ["demo", "--state-dir", str(tmp_path), "--port", str(port), "--ui-port", str(ui_port)]
    process = subprocess.Popen(
        [*CLI, *args, "--no-wait"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env=env,
    )  # fmt: skip
    try:
        _read_until(process, " session ", timeout_s=60)
        [dev_server] = children_of(process.pid)
        time.sleep(0.5)  # the session's first LLM request is on its way
        process.send_signal(stop_signal)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        silent.close()
    assert process.returncode not in (0, -stop_signal), "stopped through its own cleanup"
    assert gone(dev_server), "the dev server outlived the demo"
    assert port_is_free(port) and port_is_free(ui_port)
