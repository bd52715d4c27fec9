"""``durable-loop deployment``: a worker deployment's versions (build ids), how many
sessions run on each, and which one is current; ``--set-current BUILD_ID`` makes a build
current, so new sessions start on it and running ones move to it at their next safe point
(docs/versioning.md, infra/RUNBOOK.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from durable_loop.cli.commands.options import Address, ApiKey, Namespace

if TYPE_CHECKING:
    from durable_loop.worker.deployments import DeploymentView

Name = Annotated[
    str,
    typer.Argument(
        help="The worker deployment's name (a worker's --deployment-name). "
        "Env: DURABLE_LOOP_DEPLOYMENT_NAME.",
        envvar="DURABLE_LOOP_DEPLOYMENT_NAME",
        show_default=False,
    ),
]
SetCurrent = Annotated[
    str | None,
    typer.Option(
        "--set-current",
        help="Make this build id the current version first (its workers must be polling).",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def deployment(
    name: Name,
    set_current: SetCurrent = None,
    as_json: AsJson = False,
    address: Address = None,
    namespace: Namespace = None,
    api_key: ApiKey = None,
) -> None:
    """Show worker deployment NAME: each build, its status, the sessions and all runs
    (child sessions, sub-agents, your own workflows) still on it. A build may stop once it
    has no run left."""
    import asyncio

    temporal: dict[str, object] = {"address": address, "namespace": namespace, "api_key": api_key}
    view = asyncio.run(_run(name, set_current, temporal))
    typer.echo(view.model_dump_json(indent=2) if as_json else render(view))


async def _run(name: str, set_current: str | None, temporal: dict[str, object]) -> DeploymentView:
    from temporalio.service import RPCError, RPCStatusCode

    from durable_loop.cli.codes import CliCode
    from durable_loop.cli.commands.session_rpc import temporal_client
    from durable_loop.cli.errors import CliError
    from durable_loop.worker.deployments import describe_deployment, set_current_version

    client = await temporal_client(temporal)
    try:
        if set_current is not None:
            await set_current_version(client, name, set_current)
        return await describe_deployment(client, name)
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION):
            raise CliError(CliCode.NO_DEPLOYMENT, f"deployment {name!r}: {err.message}") from None
        raise


def render(view: DeploymentView) -> str:
    lines = [f"deployment {view.name}: current build {view.current_build_id or '(none)'}"]
    width = max((len(v.build_id) for v in view.versions), default=8)
    lines.append(
        f"  {'build id':<{width}}  {'status':<9}  {'drainage':<9}  {'sessions':>8}  {'all runs':>8}"
    )
    for v in view.versions:
        lines.append(
            f"  {v.build_id:<{width}}  {v.status:<9}  {v.drainage:<9}  "
            f"{v.running_sessions:>8}  {v.running_workflows:>8}"
        )
    return "\n".join(lines)
