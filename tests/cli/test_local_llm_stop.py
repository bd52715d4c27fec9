"""`durable-loop local-llm` stopped by SIGTERM or SIGINT, as a real process: it says so,
exits 0 and its port is free once it has exited.

The model server runs inside the command's own process (llama.cpp's server through
``xllamacpp``), so it has no child process to leave behind. The packaged weights are a
download of hundreds of megabytes, so here the runtime is a stand-in module on
PYTHONPATH that serves ``/health`` from a thread of the same process, as xllamacpp does."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from durable_loop.cli.devserver import free_port, port_is_free
from durable_loop.cli.model_fetch import ModelSource, model_path, source_path, variant_of
from tests.cli.test_devserver import CLI, _read_until, children_of

RUNTIME = '''
"""Stand-in for xllamacpp: CommonParams and a Server answering /health in a thread (and
writing the context size it was given to $STANDIN_N_CTX_FILE, when set)."""
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace


class CommonParams:
    def __init__(self):
        self.model = SimpleNamespace(path="")
        self.cpuparams = SimpleNamespace(n_threads=0)
        self.cpuparams_batch = SimpleNamespace(n_threads=0)


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


class Server:
    def __init__(self, params):
        if os.environ.get("STANDIN_N_CTX_FILE"):
            with open(os.environ["STANDIN_N_CTX_FILE"], "w") as out:
                out.write(str(params.n_ctx))
        self._http = ThreadingHTTPServer((params.hostname, params.port), _Health)
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def __del__(self):
        self._http.shutdown()
        self._http.server_close()
'''


def complete_model(cache: Path) -> None:
    variant = variant_of("0.5b")
    path = model_path(variant, cache)
    path.write_bytes(b"GGUF" + b"\0" * 60)
    record = ModelSource(
        model=variant.title,
        file=path.name,
        sha256=variant.sha256,
        size_bytes=64,
        licence=variant.licence,
        upstream=variant.upstream,
        packages=[variant.package(i) for i in range(1, variant.parts + 1)],
        version=variant.version,
    )
    source_path(path).write_text(record.model_dump_json())


def start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``local-llm`` on the stand-in runtime and a complete 0.5b model file, on a free port."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "xllamacpp.py").write_text(RUNTIME)
    complete_model(tmp_path)
    pythonpath = os.pathsep.join([str(runtime), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [
            *CLI, "local-llm", "--model", "0.5b", "--cache-dir", str(tmp_path), "--no-fetch",
            "--stock-template", *args,
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": pythonpath, "PYTHONUNBUFFERED": "1", **(env or {})},
    )  # fmt: skip


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_local_llm_stops_on_a_signal_and_frees_its_port(
    tmp_path: Path, stop_signal: signal.Signals
):
    port = free_port()
    process = start(tmp_path, "--port", str(port))
    try:
        _read_until(process, "base URL:", timeout_s=60)
        assert not port_is_free(port)
        assert children_of(process.pid) == []  # the model server runs in-process
        process.send_signal(stop_signal)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, out
    assert "stopping" in out
    assert port_is_free(port)


def test_ctx_size_reaches_the_server_and_is_announced(tmp_path: Path):
    """Longer requests (BFCL multi_turn_base's tools alone take 3,300-7,300 tokens) need a
    larger context than the default 4,096; the default itself is what the server gets
    without the flag."""
    given = tmp_path / "n_ctx"
    for args, expected in (((), "4096"), (("--ctx-size", "16384"), "16384")):
        cache = tmp_path / expected
        cache.mkdir()
        process = start(
            cache, "--port", str(free_port()), *args, env={"STANDIN_N_CTX_FILE": str(given)}
        )
        try:
            out = "\n".join(_read_until(process, "base URL:", timeout_s=60))
            process.send_signal(signal.SIGTERM)
            process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        assert f"(context {expected} tokens, loaded in" in out
        assert given.read_text() == expected
