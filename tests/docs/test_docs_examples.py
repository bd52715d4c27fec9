"""The README's and the docs' shell and Python examples run, in the order a reader meets
them, against an embedded dev server and the scripted endpoint (tests/docs/stage.py); a
block is skipped only where its page says so and why (tests/docs/blocks.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from durable_loop.cli.devserver import start_local_environment
from durable_loop.testing.scripted import ScriptedLLM
from tests.docs.blocks import (
    KNOWN_LANGUAGES,
    PAGES,
    REPO,
    RUNNABLE,
    Block,
    blocks_of,
    parse_directives,
)
from tests.docs.stage import Stage

pytestmark = pytest.mark.docs


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks_of(page) if b.language in RUNNABLE and b.skip_reason is None]


async def run_page(blocks: list[Block], cwd: Path) -> None:
    async with await start_local_environment() as env:
        with ScriptedLLM() as llm:
            stage = Stage(env.client, llm, cwd)
            try:
                for block in blocks:
                    await stage.run(block)
            finally:
                failures = await stage.close()
    for note in stage.skipped:
        warnings.warn(f"docs block not run: {note}", stacklevel=1)
    assert failures == {}, f"histories that do not replay: {failures}"


@pytest.mark.parametrize(
    "page", [p for p in PAGES if runnable(p)], ids=lambda p: str(p.relative_to(REPO))
)
async def test_the_examples_of_the_page_run(page: Path, tmp_path: Path):
    await run_page(blocks_of(page), tmp_path)


def test_every_fence_says_what_it_holds():
    unnamed = [
        f"{b.where}: {b.language or 'no language'}"
        for page in PAGES
        for b in blocks_of(page)
        if b.language not in KNOWN_LANGUAGES
    ]
    assert unnamed == []


def test_skipping_takes_a_reason():
    assert parse_directives(" skip: needs Docker ") == {"skip": ["needs Docker"]}
    assert parse_directives(" given a, b; setup x ") == {"given": ["a", "b"], "setup": ["x"]}
    with pytest.raises(ValueError, match="needs a reason"):
        parse_directives(" skip ")
    with pytest.raises(ValueError, match="unknown docs-test directive"):
        parse_directives(" ignore ")


async def test_a_broken_example_fails(tmp_path: Path):
    page = tmp_path / "PAGE.md"
    page.write_text(
        "```sh\ndurable-loop worker --tools durable_loop.demo.tools:no_such_registry\n```\n"
    )
    with pytest.raises(AssertionError, match="no attribute 'no_such_registry'"):
        await run_page(blocks_of(page), tmp_path / "cwd")
