"""durable-loop as a Temporal plugin, for clients and workers the user builds themselves.

``Client.connect(..., plugins=[DurableLoopPlugin(deps)])`` gives the client durable-loop's
data converter, and every ``Worker`` built on that client (the SDK hands client plugins
on to workers) durable-loop's workflows, activities and sandbox settings beside the
user's own. :func:`~durable_loop.worker.builder.build_worker` assembles its worker the
same way, so the activities are listed here once (the workflows in workflows.registered).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import ReplayerConfig, WorkerConfig, WorkflowRunner
from temporalio.workflow import _Definition as _WorkflowDefinition

from durable_loop.activities.appends import TranscriptActivities
from durable_loop.activities.approvals import ApprovalActivities
from durable_loop.activities.conversation_gate import ConversationGateActivities
from durable_loop.activities.gateway import LlmGateway
from durable_loop.activities.heartbeat import CANCEL_NOTICE
from durable_loop.activities.llm import LlmActivities
from durable_loop.activities.long_running import LongToolActivities
from durable_loop.activities.repair import RepairActivities
from durable_loop.activities.router import RouterActivities
from durable_loop.activities.session_audit import SessionAuditActivities
from durable_loop.activities.summarize import SummaryActivities
from durable_loop.activities.tools import ToolActivities
from durable_loop.activities.workspace import WorkspaceActivities
from durable_loop.client.connect import data_converter_for
from durable_loop.core.errors import ConfigError
from durable_loop.core.sub_agents import check_sub_agents
from durable_loop.store.workspace import WorkspaceStore
from durable_loop.worker.deps import WorkerDeps
from durable_loop.worker.failure_log import CodedFailureLog
from durable_loop.worker.sandbox import sandboxed_runner
from durable_loop.worker.versioning import deployment_config
from durable_loop.workflows.registered import WORKFLOWS

if TYPE_CHECKING:
    from durable_loop.client.codec.keys import KeyRing

__all__ = ["WORKFLOWS", "DurableLoopPlugin", "activities_for"]

PLUGIN_NAME = "durable-loop"


def activities_for(deps: WorkerDeps) -> list[Callable[..., Any]]:
    """Every activity a durable-loop worker runs, bound to ``deps``."""
    gateway = LlmGateway(deps.http, deps.environ)
    llm = LlmActivities(deps.store, gateway, deps.registry)
    summaries = SummaryActivities(deps.store, gateway)
    workspace_store = deps.workspace or WorkspaceStore(deps.store.db)
    tools = ToolActivities(deps.store, deps.registry, workspace_store)
    router = RouterActivities(deps.store, gateway, deps.registry)
    transcript = TranscriptActivities(deps.store)
    workspace = WorkspaceActivities(workspace_store, tools.once.attempts)
    approvals = ApprovalActivities(deps.store)
    return [
        llm.llm_turn,
        summaries.summarize_context,
        RepairActivities(deps.store, gateway).repair_tool_call,
        ConversationGateActivities(deps.store, gateway).conversation_gate,
        tools.list_tools,
        tools.run_tool,
        LongToolActivities(tools).run_long_tool,
        router.router_step,
        router.router_answer,
        transcript.write_messages,
        workspace.facts_commit,
        workspace.proposal_close,
        SessionAuditActivities(workspace.store).audit_session_change,
        approvals.read_tool_calls,
        workspace.record_decision,
    ]


class DurableLoopPlugin(SimplePlugin):
    """durable-loop's part of a Temporal client and worker.

    On a client: durable-loop's data converter (pydantic JSON; AES-GCM encrypted payloads
    when ``codec_keys`` are given, in the ``DURABLE_LOOP_CODEC_KEYS`` format or as a
    :class:`~durable_loop.client.codec.KeyRing`). A codec the client already has is kept
    when no keys are given. Every process that talks to the same sessions needs the same
    converter, so give client-only processes ``DurableLoopPlugin()`` (no ``deps``) too.

    On a worker (directly, or handed on by the client): with ``deps``, the session
    workflows, their activities and the one-line log of coded failures
    (:mod:`~durable_loop.worker.failure_log`); always, durable-loop's sandbox settings
    (:mod:`~durable_loop.worker.sandbox`: the pure core and the workflow helper modules
    passed through, the workflow modules sandboxed with shared code;
    ``sandbox_passthrough=True``: all of durable-loop passed through, see
    :class:`~durable_loop.worker.builder.WorkerTuning`). With ``deployment_name``, the worker
    polls as version ``build_id`` of that worker deployment (Worker Versioning,
    :mod:`~durable_loop.worker.versioning`; default build id: package version + workflow
    code digest); without, it is unversioned. Given to a ``Worker`` only, the
    worker's client must already use durable-loop's converter (e.g. from
    :func:`durable_loop.connect`); a plugin with ``deps`` on the client as well is refused.

    On a ``Replayer``: the converter, the sandbox settings and the workflows, so the
    histories of the user's workflows and of their child sessions replay.
    """

    def __init__(
        self,
        deps: WorkerDeps | None = None,
        *,
        codec_keys: KeyRing | str | None = None,
        sandbox_passthrough: bool = False,
        deployment_name: str | None = None,
        build_id: str | None = None,
    ) -> None:
        if isinstance(codec_keys, str):
            from durable_loop.client.codec.keys import KeyRing

            codec_keys = KeyRing.parse(codec_keys)
        self.deps = deps
        self.key_ring = codec_keys
        self.sandbox_passthrough = sandbox_passthrough
        self.deployment = deployment_config(deployment_name, build_id)
        if deps is not None:
            check_sub_agents(deps.registry.specs(), deps.registry.sub_agents())
        self._activities = activities_for(deps) if deps is not None else []
        super().__init__(
            PLUGIN_NAME,
            data_converter=self._data_converter,
            activities=self._add_activities,
            workflows=self._add_workflows,
            workflow_runner=self._workflow_runner,
            interceptors=[CodedFailureLog()] if deps is not None else None,
        )

    # ---------------------------------------------------------------- parameters

    def _data_converter(self, existing: DataConverter | None) -> DataConverter:
        ours = data_converter_for(self.key_ring)
        if self.key_ring is None and existing is not None and existing.payload_codec is not None:
            return dataclasses.replace(existing, payload_converter_class=PydanticPayloadConverter)
        return ours

    def _add_activities(
        self, existing: Sequence[Callable[..., Any]] | None
    ) -> Sequence[Callable[..., Any]]:
        # Given to both a client and its workers, the plugin configures a worker twice.
        present = list(existing or [])
        return present + [a for a in self._activities if a not in present]

    def _add_workflows(self, existing: Sequence[type] | None) -> Sequence[type]:
        present = list(existing or [])
        if self.deps is None:
            return present
        return present + _missing(present)

    def _workflow_runner(self, existing: WorkflowRunner | None) -> WorkflowRunner:
        return sandboxed_runner(existing, everything=self.sandbox_passthrough)

    # ---------------------------------------------------------------- hooks

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        if self.deps is not None:
            client = config["client"]
            _require_pydantic(client)
            on_client = [
                p
                for p in client.config()["plugins"]
                if isinstance(p, DurableLoopPlugin) and p is not self and p.deps is not None
            ]
            if on_client:
                raise ConfigError(
                    "DurableLoopPlugin with deps is given to both the client and the worker "
                    "(build_worker adds one): the client's already brings durable-loop's "
                    "workflows and activities to every worker built on it; give the client "
                    "DurableLoopPlugin() without deps, or leave it off the worker"
                )
            # heartbeats carry cancellation back: see activities.heartbeat
            config["max_heartbeat_throttle_interval"] = min(
                config.get("max_heartbeat_throttle_interval") or CANCEL_NOTICE, CANCEL_NOTICE
            )
            config["default_heartbeat_throttle_interval"] = min(
                config.get("default_heartbeat_throttle_interval") or CANCEL_NOTICE, CANCEL_NOTICE
            )
        if self.deployment is not None:
            config["deployment_config"] = self.deployment
        return super().configure_worker(config)

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        config = super().configure_replayer(config)
        present = list(config.get("workflows") or [])
        config["workflows"] = present + _missing(present)
        return config


def _missing(present: list[type]) -> list[type]:
    """durable-loop's workflows not yet registered. A workflow of the caller's own under
    one of their names replaces ours (e.g. another build's session workflow in a test)."""
    taken = {defn.name for w in present if (defn := _WorkflowDefinition.from_class(w))}
    return [
        w
        for w in WORKFLOWS
        if w not in present and _WorkflowDefinition.must_from_class(w).name not in taken
    ]


def _require_pydantic(client: Client) -> None:
    converter = client.data_converter.payload_converter_class
    if not issubclass(converter, PydanticPayloadConverter):
        raise ConfigError(
            "DurableLoopPlugin: the worker's client does not use durable-loop's data converter "
            f"(its payload converter is {converter.__name__}); give the plugin to "
            "Client.connect(..., plugins=[...]) instead of (or as well as) the Worker, or "
            "connect with durable_loop.connect"
        )
