"""Where the Temporal Web UI of a server is. Only the process that started the server knows:
``durable-loop server`` records its address and UI port in the state directory while it
runs, and the commands that print links read that record; for any other server the address
is given (``--web-ui-url`` / ``DURABLE_LOOP_WEB_UI_URL``)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from durable_loop.core.constants import STATE_DIR

WEB_UI_ENV = "DURABLE_LOOP_WEB_UI_URL"
RECORD_FILE = "web-ui.json"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def same_server(a: str, b: str) -> bool:
    """``HOST:PORT`` addresses of one server (any spelling of this machine counts as one)."""
    (host_a, _, port_a), (host_b, _, port_b) = a.rpartition(":"), b.rpartition(":")
    local = {host_a.strip("[]"), host_b.strip("[]")} <= LOCAL_HOSTS
    return port_a == port_b and (host_a == host_b or local)


def record_web_ui(address: str, web_ui_url: str, state_dir: Path = STATE_DIR) -> Path:
    """Remember that the server at ``address`` serves its Web UI at ``web_ui_url``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / RECORD_FILE
    path.write_text(json.dumps({"address": address, "web_ui_url": web_ui_url}))
    return path


def forget_web_ui(address: str, state_dir: Path = STATE_DIR) -> None:
    if recorded_web_ui(address, state_dir) is not None:  # not a newer server's record
        (state_dir / RECORD_FILE).unlink(missing_ok=True)


def recorded_web_ui(address: str, state_dir: Path = STATE_DIR) -> str | None:
    """The Web UI recorded for ``address``, or None."""
    with contextlib.suppress(OSError, ValueError):
        record = json.loads((state_dir / RECORD_FILE).read_text())
        if isinstance(record, dict) and same_server(str(record.get("address")), address):
            url = record.get("web_ui_url")
            return url if isinstance(url, str) else None
    return None
