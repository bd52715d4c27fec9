"""Recoveries: named, opt-in answers to the ways a model goes wrong, one record each.

A new recovery is one module holding its :class:`Recovery` record plus one line in
``registry.py``; an application registers its own with :func:`register` (see
docs/recoveries.md). ``RuntimeConfig.recoveries`` names the ones a session uses.
"""

from durable_loop.core.recoveries.base import (
    Action,
    Event,
    LastFailure,
    Legacy,
    MessageFacts,
    Recovery,
    RecoverySettings,
    Stage,
)
from durable_loop.core.recoveries.registry import REGISTRY, default_names, judges, register

__all__ = [
    "REGISTRY",
    "Action",
    "Event",
    "LastFailure",
    "Legacy",
    "MessageFacts",
    "Recovery",
    "RecoverySettings",
    "Stage",
    "default_names",
    "judges",
    "register",
]
