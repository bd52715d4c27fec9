"""The Temporal SDK's known crash at interpreter exit, told apart from a failing example.

A short-lived client process can abort (SIGABRT) while Python finalizes, after the script
has finished: the SDK's Rust runtime threads release a thread state the interpreter has
already torn down ("Fatal Python error: PyGILState_Release ... Python runtime state:
finalizing"; temporalio/sdk-python#300, open). The example's work is done by then, so such
an exit counts as clean; any other non-zero exit still fails the example.
"""

from __future__ import annotations

import signal

FINALIZING_CRASH = (
    "Fatal Python error: PyGILState_Release",
    "Python runtime state: finalizing",
)


def exited_cleanly(returncode: int | None, output: str) -> bool:
    if returncode == 0:
        return True
    return returncode == -signal.SIGABRT and all(line in output for line in FINALIZING_CRASH)
