"""A scripted LLM endpoint on a real local HTTP server.

Each model name has its own queue of replies, so concurrent tests do not interfere.
A reply is a fixed response (text, tool calls, an HTTP error, a delay) or a function of
the recorded request, which lets a test script behaviour rather than a fixed sequence.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", "") for t in self.body.get("tools", [])]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: str | None = None
    drop_connection: bool = False
    pace_s: float = 0.0
    """Seconds between the events of a streamed (``text/event-stream``) reply."""
    emitted: list[float] | None = None
    """When given, a paced reply appends the ``time.monotonic()`` at which it wrote each
    event (``bench/stream_latency.py`` measures token latency from these)."""

    def encoded(self) -> bytes:
        if self.raw is not None:
            return self.raw.encode()
        return json.dumps(self.body).encode()


Step = Reply | Callable[[RecordedRequest], Reply]


class ScriptedLLM:
    """Start with :meth:`start` (or as a context manager); ``base_url`` points at it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._queues: dict[str, deque[Step]] = defaultdict(deque)
        self._fallbacks: dict[str, Step] = {}
        self._requests: dict[str, list[RecordedRequest]] = defaultdict(list)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(
            (host, port), self._handler_class(), bind_and_activate=False
        )
        # Hundreds of sessions connect at once in load benchmarks; the default listen
        # backlog of 5 drops their SYNs and each retry costs a second.
        self._server.request_queue_size = 1024
        try:
            self._server.server_bind()
            self._server.server_activate()
        except OSError:
            self._server.server_close()
            raise
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        host_text = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{host_text}:{port}"

    def start(self) -> ScriptedLLM:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def script(self, model: str, steps: Iterable[Step], *, then: Step | None = None) -> None:
        """Queue replies for ``model``; ``then`` answers every request after the queue."""
        with self._lock:
            self._queues[model].extend(steps)
            if then is not None:
                self._fallbacks[model] = then

    def requests(self, model: str) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests[model])

    def forget(self, model: str) -> int:
        """Drop the requests recorded for ``model`` (long benchmarks); returns how many."""
        with self._lock:
            dropped = len(self._requests[model])
            self._requests[model].clear()
            return dropped

    def remaining(self, model: str) -> int:
        with self._lock:
            return len(self._queues[model])

    # ------------------------------------------------------------------ serving

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self._requests[request.model].append(request)
            queue = self._queues.get(request.model)
            step = queue.popleft() if queue else self._fallbacks.get(request.model)
        if step is None:
            return Reply(
                status=400,
                body={
                    "error": {
                        "message": f"scripted endpoint: no reply left for model {request.model!r}"
                    }
                },
            )
        return step(request) if callable(step) else step

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle on, the body waits for the
            # client's delayed ACK (~40 ms per reply), so a "zero-latency" endpoint was not.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                self._send(Reply(body={"status": "ok"}))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                model = outer.model_of(self.path, body)
                body.setdefault("model", model)
                recorded = RecordedRequest(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    received_at=time.time(),
                )
                reply = outer._next(recorded)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop_connection:
                    self.close_connection = True
                    self.connection.close()
                    return
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                payload = reply.encoded()
                try:
                    self.send_response(reply.status)
                    headers = {"content-type": "application/json", **reply.headers}
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    if not reply.pace_s:
                        self.wfile.write(payload)
                        return
                    for event in payload.split(b"\n\n"):
                        self.wfile.write(event + b"\n\n" if event else b"")
                        self.wfile.flush()
                        if reply.emitted is not None:
                            reply.emitted.append(time.monotonic())
                        time.sleep(reply.pace_s)
                except (BrokenPipeError, ConnectionResetError):
                    return

        return Handler

    @staticmethod
    def model_of(path: str, body: dict[str, Any]) -> str:
        """The script key: the request's model (Gemini carries it in the path)."""
        if isinstance(body.get("model"), str):
            return str(body["model"])
        marker = "/models/"
        if marker in path:
            return path.split(marker, 1)[1].split(":", 1)[0]
        return ""
