"""The README's and the docs' Python examples import only from the public face
(``from durable_loop import ...``) or, for test helpers, from ``durable_loop.testing``, or,
for an application's own recoveries, from ``durable_loop.recoveries``;
only names those export; and are valid Python."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import durable_loop
import durable_loop.recoveries
import durable_loop.testing
from tests.docs.blocks import PAGES as DOC_PAGES
from tests.docs.blocks import REPO, blocks_of

PAGES = sorted([*DOC_PAGES, *(REPO / "examples").rglob("README.md")])
# any module under durable_loop but ``durable_loop.testing`` and ``durable_loop.recoveries``
# themselves (not their submodules)
DEEP_IMPORT = re.compile(
    r"^\s*(from|import)\s+durable_loop\.(?!(testing|recoveries)(?![\w.]))", re.MULTILINE
)
FACES = {
    "durable_loop": set(durable_loop.__all__),
    "durable_loop.testing": set(durable_loop.testing.__all__),
    "durable_loop.recoveries": set(durable_loop.recoveries.__all__),
}


def python_blocks(page: Path) -> list[tuple[int, str]]:
    return [(b.line + 1, b.source) for b in blocks_of(page) if b.language == "python"]


def test_the_pages_have_python_examples():
    assert any(python_blocks(page) for page in PAGES)
    assert python_blocks(REPO / "README.md")


def test_only_the_two_faces_count_as_shallow():
    allowed = ["from durable_loop import X", "from durable_loop.testing import reply"]
    deep = [
        "from durable_loop.core.registry import ToolRegistry",
        "from durable_loop.testing.history import replay_failures",
        "from durable_loop.testing_extra import x",
        "import durable_loop.testing.scripted",
    ]
    assert [line for line in allowed if DEEP_IMPORT.search(line)] == []
    assert [line for line in deep if DEEP_IMPORT.search(line)] == deep


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_examples_import_only_the_public_face(page: Path):
    problems = []
    for first_line, block in python_blocks(page):
        where = f"{page.relative_to(REPO)}:{first_line}"
        for match in DEEP_IMPORT.finditer(block):
            line = block[match.start() :].splitlines()[0].strip()
            problems.append(f"{where}: {line}")
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # snippets may await
        tree = compile(block, where, "exec", flags=flags)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in FACES:
                missing = [a.name for a in node.names if a.name not in FACES[node.module]]
                if missing:
                    problems.append(f"{where}: not exported: {', '.join(missing)}")
    assert problems == []
