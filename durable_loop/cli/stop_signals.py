"""SIGTERM, as a supervisor or a container runtime stops a command, takes the path of Ctrl-C.

Python's default for SIGTERM ends the process at once: no ``finally`` and no ``with`` block
runs, so a dev server the command started is left to the kernel's parent-death signal and
is still shutting down, holding its ports, after the command has exited. Under
:func:`sigterm_as_ctrl_c` a SIGTERM is handled by whatever handles SIGINT: asyncio's
runner cancels its main task, anywhere else ``KeyboardInterrupt`` is raised, and the
command stops its children and waits for them before it exits.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT ignored (a background job): still stop


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM is handled as SIGINT (main thread only: Python runs
    signal handlers there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _as_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
