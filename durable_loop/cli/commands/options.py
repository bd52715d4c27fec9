"""Options shared by several commands. Flags default to ``None`` so that
:mod:`durable_loop.worker.settings` can fall back to the environment, then to defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

TEMPORAL_PANEL = "Temporal connection"

Address = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="Temporal frontend HOST:PORT. Env: TEMPORAL_ADDRESS. Default: 127.0.0.1:7233.",
        rich_help_panel=TEMPORAL_PANEL,
        show_default=False,
    ),
]
Namespace = Annotated[
    str | None,
    typer.Option(
        "--namespace",
        "-n",
        help="Temporal namespace. Env: TEMPORAL_NAMESPACE. Default: default.",
        rich_help_panel=TEMPORAL_PANEL,
        show_default=False,
    ),
]
ApiKey = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        help="API key (turns TLS on). Env: TEMPORAL_API_KEY.",
        rich_help_panel=TEMPORAL_PANEL,
        show_default=False,
    ),
]
WebUiUrl = Annotated[
    str | None,
    typer.Option(
        "--web-ui-url",
        help="The server's Web UI, for links (http://HOST:PORT). Env: DURABLE_LOOP_WEB_UI_URL. "
        "Default: the one `durable-loop server` runs, else no links.",
        rich_help_panel=TEMPORAL_PANEL,
        show_default=False,
    ),
]
DbUrl = Annotated[
    str | None,
    typer.Option(
        "--db-url",
        help="Transcript store URL (sqlite:///PATH or postgresql://...). "
        "Env: DURABLE_LOOP_DB_URL. Default: sqlite file in .durable-loop/.",
        show_default=False,
    ),
]
TaskQueue = Annotated[
    str | None,
    typer.Option(
        "--task-queue",
        help="Task queue of the session workflows. Env: DURABLE_LOOP_TASK_QUEUE. "
        "Default: durable-loop.",
        show_default=False,
    ),
]
StateDir = Annotated[
    Path,
    typer.Option("--state-dir", help="Directory for local state (dev server database, logs)."),
]


def temporal_flags(
    address: str | None, namespace: str | None, api_key: str | None
) -> dict[str, object]:
    return {"address": address, "namespace": namespace, "api_key": api_key}
