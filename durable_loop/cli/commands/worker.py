"""``durable-loop worker``: run the session workflow and its activities against any
Temporal service (flags, then TEMPORAL_* / DURABLE_LOOP_* variables, then defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from durable_loop.cli.commands.options import (
    TEMPORAL_PANEL,
    Address,
    ApiKey,
    DbUrl,
    Namespace,
    TaskQueue,
)

TUNING_PANEL = "Worker tuning (default: SDK defaults)"
VERSIONING_PANEL = "Worker Versioning"


def _tls_path(flag: str, env: str) -> object:
    return typer.Option(
        flag, help=f"Env: {env}.", rich_help_panel=TEMPORAL_PANEL, show_default=False
    )


def _tuning(flag: str, help_text: str) -> object:
    return typer.Option(flag, help=help_text, rich_help_panel=TUNING_PANEL, show_default=False)


def worker(
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
    tls: Annotated[
        bool | None,
        typer.Option(
            "--tls/--no-tls",
            help="Force TLS on or off. Env: TEMPORAL_TLS.",
            rich_help_panel=TEMPORAL_PANEL,
            show_default=False,
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None, _tls_path("--tls-cert", "TEMPORAL_TLS_CLIENT_CERT_PATH")
    ] = None,
    tls_key: Annotated[Path | None, _tls_path("--tls-key", "TEMPORAL_TLS_CLIENT_KEY_PATH")] = None,
    tls_ca: Annotated[
        Path | None, _tls_path("--tls-ca", "TEMPORAL_TLS_SERVER_CA_CERT_PATH")
    ] = None,
    tls_server_name: Annotated[
        str | None, _tls_path("--tls-server-name", "TEMPORAL_TLS_SERVER_NAME")
    ] = None,
    task_queue: TaskQueue = None,
    db_url: DbUrl = None,
    tools: Annotated[
        str | None,
        typer.Option(
            "--tools",
            help="package.module:attribute of a ToolRegistry (or a zero-arg function "
            "returning one). Env: DURABLE_LOOP_TOOLS. Default: no tools.",
            show_default=False,
        ),
    ] = None,
    max_concurrent_activities: Annotated[
        int | None, _tuning("--max-concurrent-activities", "Activity slots.")
    ] = None,
    max_concurrent_workflow_tasks: Annotated[
        int | None, _tuning("--max-concurrent-workflow-tasks", "Workflow task slots.")
    ] = None,
    max_concurrent_local_activities: Annotated[
        int | None, _tuning("--max-concurrent-local-activities", "Local activity slots.")
    ] = None,
    max_cached_workflows: Annotated[
        int | None, _tuning("--max-cached-workflows", "Sticky workflow cache size.")
    ] = None,
    workflow_task_pollers: Annotated[
        int | None, _tuning("--workflow-task-pollers", "Concurrent workflow task polls.")
    ] = None,
    activity_task_pollers: Annotated[
        int | None, _tuning("--activity-task-pollers", "Concurrent activity task polls.")
    ] = None,
    sticky_timeout_s: Annotated[
        float | None,
        _tuning(
            "--sticky-timeout-s",
            "Seconds a session's task waits for this worker before any worker takes it "
            "(SDK default 10): how long the sessions of a dead worker wait.",
        ),
    ] = None,
    deployment_name: Annotated[
        str | None,
        typer.Option(
            "--deployment-name",
            help="Worker Versioning: run as one version of this worker deployment (pinned "
            "sessions stay on their build; see `durable-loop deployment`). Env: "
            "DURABLE_LOOP_DEPLOYMENT_NAME. Default: an unversioned worker.",
            rich_help_panel=VERSIONING_PANEL,
            show_default=False,
        ),
    ] = None,
    build_id: Annotated[
        str | None,
        typer.Option(
            "--build-id",
            help="This worker's build id. Env: DURABLE_LOOP_BUILD_ID. Default: the package "
            "version and a digest of the workflow code.",
            rich_help_panel=VERSIONING_PANEL,
            show_default=False,
        ),
    ] = None,
    sandbox_passthrough: Annotated[
        bool | None,
        _tuning(
            "--sandbox-passthrough/--no-sandbox-passthrough",
            "Pass all of durable_loop through the workflow sandbox, workflow modules too.",
        ),
    ] = None,
) -> None:
    """Run a worker for the session workflow until Ctrl-C or SIGTERM.

    Tools come from --tools, from the ensemble files named by DURABLE_LOOP_ENSEMBLES and
    from the MCP servers of the file named by DURABLE_LOOP_MCP_CONFIG.
    """
    import asyncio

    from durable_loop.worker.run import run_worker
    from durable_loop.worker.settings import WorkerSettings

    settings = WorkerSettings.load(
        temporal={
            "address": address,
            "namespace": namespace,
            "api_key": api_key,
            "tls": tls,
            "tls_client_cert_path": tls_cert,
            "tls_client_key_path": tls_key,
            "tls_server_ca_cert_path": tls_ca,
            "tls_server_name": tls_server_name,
        },
        tuning={
            "max_concurrent_activities": max_concurrent_activities,
            "max_concurrent_workflow_tasks": max_concurrent_workflow_tasks,
            "max_concurrent_local_activities": max_concurrent_local_activities,
            "max_cached_workflows": max_cached_workflows,
            "workflow_task_pollers": workflow_task_pollers,
            "activity_task_pollers": activity_task_pollers,
            "sticky_timeout_s": sticky_timeout_s,
            "sandbox_passthrough": sandbox_passthrough,
        },
        task_queue=task_queue,
        db_url=db_url,
        tools=tools,
        deployment_name=deployment_name,
        build_id=build_id,
    )
    asyncio.run(run_worker(settings, announce=lambda line: typer.echo(line)))
