"""What import-linter cannot say: it sees external packages only whole (``temporalio``), so
the parts of the SDK that the pure core and the workflows must never import are checked
here, from the source (imports inside functions included)."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "durable_loop"
SANDBOXED = ("core", "workflows")
FORBIDDEN = ("temporalio.client", "temporalio.worker", "temporalio.service", "temporalio.testing")


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("layer", SANDBOXED)
def test_sandboxed_layers_never_import_the_client_or_worker_side_of_the_sdk(layer: str) -> None:
    offending = {
        f"{path.relative_to(PACKAGE.parent)}: {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(FORBIDDEN)
    }
    assert not offending


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from temporalio.client import Client\n")
    assert "temporalio.client" in imported_modules(module)
