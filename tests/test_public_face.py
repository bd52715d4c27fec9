"""The public face: ``durable_loop`` exports the user API lazily (PEP 562), so importing
it, or any ``durable_loop.core`` module, inside the workflow sandbox pulls in no client,
worker or store code."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import durable_loop
import durable_loop.testing

ROOT = Path(durable_loop.__file__)
HEAVY = ("temporalio.client", "httpx", "sqlalchemy")
# What an application writes against, no more: pydantic-ai's Temporal integration exports
# 9 names, the OpenAI Agents SDK's Temporal plugin 12.
MAX_PUBLIC_NAMES = 50


def is_heavy(module: str) -> bool:
    return any(module == h or module.startswith(h + ".") for h in HEAVY)


def imported_after(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT.parent.parent,
    )
    return json.loads(out.stdout)


def test_importing_the_package_imports_nothing_of_it():
    modules = imported_after("import durable_loop")
    assert [m for m in modules if m.startswith("durable_loop.")] == []
    assert [m for m in modules if is_heavy(m)] == []


def test_the_core_and_the_workflows_stay_free_of_client_worker_and_store():
    modules = imported_after(
        "import durable_loop.core.contracts, durable_loop.workflows.registered"
    )
    layers = {"client", "worker", "store", "activities", "service", "cli", "testing"}
    assert [m for m in modules if m.startswith("durable_loop.") and m.split(".")[1] in layers] == []
    assert [m for m in modules if is_heavy(m)] == []


def test_every_public_name_resolves():
    for name in durable_loop.__all__:
        assert getattr(durable_loop, name) is not None, name
    assert set(durable_loop.__all__) <= set(dir(durable_loop))
    namespace: dict[str, object] = {}
    exec("from durable_loop import *", namespace)
    assert set(durable_loop.__all__) <= set(namespace)


def test_the_face_stays_small_and_leaves_test_helpers_to_the_testing_kit():
    """Test helpers import from ``durable_loop.testing``; internals, carried state and
    rarely used models from the module that defines them."""
    assert len(durable_loop.__all__) <= MAX_PUBLIC_NAMES
    assert len(set(durable_loop.__all__)) == len(durable_loop.__all__)
    assert set(durable_loop.__all__).isdisjoint(durable_loop.testing.__all__)
    for name in durable_loop.testing.__all__:
        assert getattr(durable_loop.testing, name) is not None, name


def test_an_unknown_name_is_an_attribute_error():
    try:
        durable_loop.NoSuchThing  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_the_lazy_table_the_type_checking_imports_and_all_agree():
    """What mypy and IDEs see (the TYPE_CHECKING imports) is what loads at run time."""
    names = {n for ns in durable_loop._EXPORTS.values() for n in ns} | set(durable_loop._MODULES)
    table = {name: durable_loop._where(name) for name in names}
    assert sorted(table) == sorted(durable_loop.__all__)
    checked: dict[str, str] = {}
    tree = ast.parse(ROOT.read_text())
    guard = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.dump(n.test)
    )
    for node in guard.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            # ``from durable_loop.core import presets`` names a module
            module = (
                f"{node.module}.{alias.name}"
                if alias.name in durable_loop._MODULES
                else node.module
            )
            checked[alias.asname or alias.name] = module
    assert checked == table


def test_nothing_in_the_package_imports_the_public_face():
    """Also an import-linter contract; this names the file and line."""
    offenders = []
    for path in sorted(ROOT.parent.rglob("*.py")):
        if path == ROOT:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "durable_loop"
                and node.level == 0
            ):
                offenders.append(f"{path}:{node.lineno}")
            if isinstance(node, ast.Import) and any(a.name == "durable_loop" for a in node.names):
                offenders.append(f"{path}:{node.lineno}")
    assert offenders == []
