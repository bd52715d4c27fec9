"""Traces of the CLI's own calls: ``send``, ``chat`` and ``serve`` export their
``send_message`` spans (the roots of the messages' traces) when OTEL_* configures an
exporter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

CLI_SERVICE_NAME = "durable-loop-cli"
HTTP_SERVICE_NAME = "durable-loop-service"


@contextmanager
def client_tracing(default_name: str = CLI_SERVICE_NAME) -> Iterator[None]:
    from durable_loop.worker.observability.setup import process_tracing

    with process_tracing(os.environ, default_name):
        yield
