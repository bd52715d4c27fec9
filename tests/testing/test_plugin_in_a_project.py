"""The pytest plugin in a project of its own (no pytest or asyncio configuration): async
tests that take its fixtures run on pytest-asyncio, other async tests are left alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

TESTS = """
import pytest


async def test_takes_a_fixture_of_the_plugin(scripted_llm):
    assert scripted_llm.base_url.startswith("http://127.0.0.1:")


@pytest.mark.asyncio(loop_scope="function")
async def test_keeps_its_own_mark(scripted_llm):
    assert scripted_llm.base_url


async def test_takes_nothing_of_the_plugin():
    pass
"""


def test_async_tests_that_take_the_plugins_fixtures_run_without_configuration(tmp_path: Path):
    (tmp_path / "test_project.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "test_project.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert "PASSED test_project.py::test_takes_a_fixture_of_the_plugin" in out, out
    assert "PASSED test_project.py::test_keeps_its_own_mark" in out, out
    assert "FAILED test_project.py::test_takes_nothing_of_the_plugin" in out, out
    assert "async def functions are not natively supported" in out
