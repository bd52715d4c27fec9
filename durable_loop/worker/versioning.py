"""Worker Versioning: a worker that names a deployment polls as one version of it
(deployment name + build id); the server routes each pinned session to the version it
started on, and new sessions to the deployment's current version."""

from __future__ import annotations

from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import WorkerDeploymentConfig

from durable_loop.worker.build_id import default_build_id


def deployment_version(
    deployment_name: str, build_id: str | None = None
) -> WorkerDeploymentVersion:
    return WorkerDeploymentVersion(
        deployment_name=deployment_name, build_id=build_id or default_build_id()
    )


def deployment_config(
    deployment_name: str | None, build_id: str | None = None
) -> WorkerDeploymentConfig | None:
    """None (an unversioned worker, as before versioning) without a deployment name.
    Workflows that declare no behaviour (a user's own, the child sessions, sub-agents) are
    pinned: a run never meets code it did not start on."""
    if deployment_name is None:
        return None
    return WorkerDeploymentConfig(
        version=deployment_version(deployment_name, build_id),
        use_worker_versioning=True,
        default_versioning_behavior=VersioningBehavior.PINNED,
    )
