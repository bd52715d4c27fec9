"""The Python the docs' blocks run under: this test's own, or the one named by
``DURABLE_LOOP_DOCS_PYTHON`` (a plain install's, made by ``.ci/plain-install``), which must
then import ``durable_loop`` from its own site-packages, not from this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.docs.blocks import REPO

DOCS_PYTHON_ENV = "DURABLE_LOOP_DOCS_PYTHON"


@dataclass(frozen=True)
class Interpreter:
    python: str
    pythonpath: str
    """What the blocks get as PYTHONPATH: where ``tests.docs.python_block`` (and the
    reader's own modules under ``tests/docs``) are found."""
    has_pytest: bool
    """pytest and pytest-asyncio are importable (the ``testing`` extra)."""


def docs_interpreter(cwd: Path) -> Interpreter:
    outside = os.environ.get(DOCS_PYTHON_ENV, "").strip()
    if not outside:
        return Interpreter(python=sys.executable, pythonpath=str(REPO), has_pytest=True)
    path = cwd / "pythonpath"
    path.mkdir()
    (path / "tests").symlink_to(REPO / "tests")
    probe = subprocess.run([outside, "-c", "import pytest, pytest_asyncio"], capture_output=True)
    return Interpreter(python=outside, pythonpath=str(path), has_pytest=probe.returncode == 0)
