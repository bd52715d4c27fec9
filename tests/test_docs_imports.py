"""The README's and the docs' Python examples import only from the public face
(``from durable_loop import ...``), only names it exports, and are valid Python."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import durable_loop
from tests.docs.blocks import PAGES as DOC_PAGES
from tests.docs.blocks import REPO, blocks_of

PAGES = sorted([*DOC_PAGES, *(REPO / "examples").rglob("README.md")])
DEEP_IMPORT = re.compile(r"^\s*(from|import)\s+durable_loop\.", re.MULTILINE)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    return [(b.line + 1, b.source) for b in blocks_of(page) if b.language == "python"]


def test_the_pages_have_python_examples():
    assert any(python_blocks(page) for page in PAGES)
    assert python_blocks(REPO / "README.md")


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
            if isinstance(node, ast.ImportFrom) and node.module == "durable_loop":
                missing = [a.name for a in node.names if a.name not in durable_loop.__all__]
                if missing:
                    problems.append(f"{where}: not exported: {', '.join(missing)}")
    assert problems == []
