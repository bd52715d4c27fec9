"""The codes of chaos runs (``durable-loop chaos``). Members of
:class:`~durable_loop.core.errors.Code`; unknown scenario names are the CLI's
``UNKNOWN_SCENARIO``. ``docs/architecture.md`` (Errors, "Chaos") lists them.
"""

from __future__ import annotations

from durable_loop.core.errors import Code


class ChaosCode(Code):
    CHAOS_PROCESS_FAILED = "CHAOS_PROCESS_FAILED"
