"""What a user installs, run as a user runs it: the wheel in a venv of its own, named by
``DURABLE_LOOP_INSTALL_PYTHON`` (``.ci/plain-install`` makes it, once with no extras and
once with the extras ``make demo`` and the README's testing section install). Skipped in
the dev venv, where every extra is present and a missing one would go unseen."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from durable_loop.cli.devserver import free_port, port_is_free
from durable_loop.core.extras import EXTRA_OF
from tests.conftest import unique
from tests.demo.small_model import small_model

PYTHON = os.environ.get("DURABLE_LOOP_INSTALL_PYTHON", "").strip()
EXTRAS = {e for e in os.environ.get("DURABLE_LOOP_INSTALL_EXTRAS", "").split(",") if e}

BROUGHT_BY_BASE = {"cryptography"}
"""Packages of extras that a base dependency installs anyway (mcp needs ``pyjwt[crypto]``)."""

pytestmark = [
    pytest.mark.install,
    pytest.mark.skipif(not PYTHON, reason="needs DURABLE_LOOP_INSTALL_PYTHON (.ci/plain-install)"),
]


def run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 180):
    """``argv[0]`` is a program of the install's venv; nothing of this checkout on the path."""
    program = str(Path(PYTHON).parent / argv[0])
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DURABLE_LOOP_", "PYTHON"))}
    return subprocess.run(
        [program, *argv[1:]],
        env={**clean, **(env or {})},
        cwd=Path(PYTHON).parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_install_is_what_it_says():
    """Each extra's package is installed exactly when its extra is; durable_loop comes
    from the venv's site-packages, not from this checkout."""
    probe = (
        "import importlib.util, durable_loop; print(durable_loop.__file__); "
        f"print(*[p for p in {sorted(EXTRA_OF)!r} if importlib.util.find_spec(p)])"
    )
    done = run(["python", "-c", probe])
    assert done.returncode == 0, done.stderr
    where, present = done.stdout.splitlines()
    assert "site-packages" in where
    expected = {p for p, extra in EXTRA_OF.items() if extra in EXTRAS}
    assert set(present.split()) - BROUGHT_BY_BASE == expected - BROUGHT_BY_BASE


def test_every_public_name_resolves():
    done = run(
        [
            "python",
            "-c",
            "import durable_loop; [getattr(durable_loop, n) for n in durable_loop.__all__]",
        ]
    )
    assert done.returncode == 0, done.stderr


def test_help_answers():
    done = run(["durable-loop", "--help"])
    assert done.returncode == 0, done.stderr
    assert "worker" in done.stdout and "send" in done.stdout


@pytest.mark.skipif("postgres" in EXTRAS, reason="psycopg is installed")
def test_a_postgres_store_without_its_extra_is_one_coded_line():
    url = "postgresql://nobody@127.0.0.1:9/none"
    done = run(
        [
            "durable-loop",
            "worker",
            "--tools",
            "durable_loop.demo.tools:registry",
            "--db-url",
            url,
            "--address",
            f"127.0.0.1:{free_port()}",
        ],
        timeout=60,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == [
        "error: EXTRA_NOT_INSTALLED: the PostgreSQL store needs psycopg, which is not "
        "installed: pip install 'durable-loop[postgres]'"
    ]


def test_the_demo_runs_on_an_endpoint_from_the_environment(tmp_path: Path, scripted_llm):
    """``make demo``'s own code path (``durable-loop demo``), its model a scripted endpoint."""
    model = unique("hosted-model")
    scripted_llm.script(model, [], then=small_model)
    port, ui_port = free_port(), free_port()
    env = {"DURABLE_LOOP_LLM_BASE_URL": scripted_llm.base_url, "DURABLE_LOOP_LLM_MODEL": model}
    done = run(
        [
            "durable-loop",
            "demo",
            "--state-dir",
            str(tmp_path),
            "--port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--no-wait",
        ],
        env=env,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "assistant: The result of 23 * 19 + 4 is 441." in done.stdout
    assert "demo: PASS" in done.stdout
    assert port_is_free(port), "the dev server was stopped"
