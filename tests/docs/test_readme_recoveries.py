"""The README's recoveries table is the one the registry generates, so the docs cannot
drift from the code (regenerate with ``python -m durable_loop.core.recoveries.table``)."""

from __future__ import annotations

from durable_loop.core.recoveries.registry import BUILTINS, REGISTRY
from durable_loop.core.recoveries.table import END, START, readme_block
from tests.docs.blocks import REPO


def test_the_readme_holds_the_generated_recoveries_table():
    text = (REPO / "README.md").read_text()
    assert text.count(START) == 1 and text.count(END) == 1
    shown = text[text.index(START) : text.index(END) + len(END)]
    assert list(REGISTRY) == [r.name for r in BUILTINS], "an application recovery is registered"
    assert shown == readme_block()
