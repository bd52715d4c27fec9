"""A helper module a test worker passes through its sandbox, as the plugin passes through
the helpers of ``durable_loop.workflows``: it reads the clock."""

from __future__ import annotations

import datetime


def wall_clock_iso() -> str:
    return datetime.datetime.now().isoformat()
