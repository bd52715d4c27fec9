"""Every workflow a durable-loop worker runs (the worker plugin registers them, the
replay helpers replay with them)."""

from __future__ import annotations

from durable_loop.workflows.child_session import ChildSessionWorkflow
from durable_loop.workflows.session import SessionWorkflow
from durable_loop.workflows.sub_agent_workflow import SubAgentWorkflow

WORKFLOWS: tuple[type, ...] = (SessionWorkflow, ChildSessionWorkflow, SubAgentWorkflow)
