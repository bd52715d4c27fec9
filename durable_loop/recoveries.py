"""Your own recovery: the extension point beside the public face (docs/recoveries.md).

An application registers a recovery once per process, at import, in the worker's process
and wherever settings are built; ``RuntimeConfig(recoveries=[...])`` then names it like a
built-in one.
"""

from durable_loop.core.recoveries import (
    Action,
    Event,
    LastFailure,
    MessageFacts,
    Recovery,
    RecoverySettings,
    Stage,
    default_names,
    register,
)

__all__ = [
    "Action",
    "Event",
    "LastFailure",
    "MessageFacts",
    "Recovery",
    "RecoverySettings",
    "Stage",
    "default_names",
    "register",
]
