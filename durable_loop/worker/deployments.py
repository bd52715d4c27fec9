"""Operating a worker deployment: its versions, how many sessions run on each, and which
version is current (new sessions start there; pinned ones move there at continue-as-new).

The Python SDK's ``Client`` has no worker-deployment methods yet, so these call the
WorkflowService RPCs the ``temporal worker deployment`` commands call."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client

from durable_loop.core import names

VERSION_ATTRIBUTE = "TemporalWorkerDeploymentVersion"
"""The system search attribute that names the version a pinned run is on: ``name:build``."""


class VersionRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    build_id: str
    status: str
    """``CURRENT``, ``RAMPING``, ``DRAINING``, ``DRAINED``, ``INACTIVE`` (the server's)."""
    drainage: str
    """What the server last found for a version no longer current: ``DRAINING`` while a
    pinned run may still use it; the server checks every few minutes."""
    running_sessions: int
    running_workflows: int
    """Every open run pinned to the version: sessions, child sessions, sub-agents and the
    application's own workflows. The build may stop once this is 0."""
    created: datetime | None


class DeploymentView(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    current_build_id: str | None
    versions: list[VersionRow]


def version_key(deployment_name: str, build_id: str) -> str:
    return f"{deployment_name}:{build_id}"


async def running_sessions(client: Client, deployment_name: str, build_id: str) -> int:
    """Session runs open and pinned to the version, from visibility (seconds behind)."""
    query = f"WorkflowType = '{names.SESSION_WORKFLOW}' AND " + _running_on(
        deployment_name, build_id
    )
    return (await client.count_workflows(query)).count


async def running_workflows(client: Client, deployment_name: str, build_id: str) -> int:
    """Every run open and pinned to the version, whatever its type."""
    return (await client.count_workflows(_running_on(deployment_name, build_id))).count


def _running_on(deployment_name: str, build_id: str) -> str:
    key = version_key(deployment_name, build_id).replace("'", "")
    return f"ExecutionStatus = 'Running' AND {VERSION_ATTRIBUTE} = '{key}'"


async def describe_deployment(client: Client, deployment_name: str) -> DeploymentView:
    response = await client.workflow_service.describe_worker_deployment(
        DescribeWorkerDeploymentRequest(namespace=client.namespace, deployment_name=deployment_name)
    )
    info = response.worker_deployment_info
    current = info.routing_config.current_deployment_version
    rows = []
    for summary in info.version_summaries:
        build_id = summary.deployment_version.build_id
        rows.append(
            VersionRow(
                build_id=build_id,
                status=_enum_word(summary.DESCRIPTOR.fields_by_name["status"], summary.status),
                drainage=_enum_word(
                    summary.DESCRIPTOR.fields_by_name["drainage_status"], summary.drainage_status
                ),
                running_sessions=await running_sessions(client, deployment_name, build_id),
                running_workflows=await running_workflows(client, deployment_name, build_id),
                created=(
                    summary.create_time.ToDatetime(UTC) if summary.HasField("create_time") else None
                ),
            )
        )
    rows.sort(key=lambda r: r.created or datetime.min.replace(tzinfo=UTC))
    return DeploymentView(name=info.name, current_build_id=current.build_id or None, versions=rows)


async def set_current_version(client: Client, deployment_name: str, build_id: str) -> None:
    """Make ``build_id`` the current version: new sessions start on it, and every pinned
    session learns of it and moves at its next safe point."""
    await client.workflow_service.set_worker_deployment_current_version(
        SetWorkerDeploymentCurrentVersionRequest(
            namespace=client.namespace,
            deployment_name=deployment_name,
            build_id=build_id,
            identity=client.identity,
        )
    )


def _enum_word(field: object, value: int) -> str:
    enum = field.enum_type  # type: ignore[attr-defined]
    name: str = enum.values_by_number[value].name if value in enum.values_by_number else ""
    for prefix in ("WORKER_DEPLOYMENT_VERSION_STATUS_", "VERSION_DRAINAGE_STATUS_"):
        name = name.removeprefix(prefix)
    return name if name and name != "UNSPECIFIED" else "-"


__all__ = [
    "VERSION_ATTRIBUTE",
    "DeploymentView",
    "VersionRow",
    "describe_deployment",
    "running_sessions",
    "running_workflows",
    "set_current_version",
    "version_key",
]
