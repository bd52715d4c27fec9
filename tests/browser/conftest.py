"""Headless Chromium from Debian's ``chromium`` package, driven by Playwright's Python API
(never ``playwright install``), and a real uvicorn server on a free port."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
import uvicorn

from durable_loop.cli.devserver import free_port
from durable_loop.service import ServiceDeps, create_app

CHROMIUM = Path(os.environ.get("DURABLE_LOOP_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); CI runs these tests")


@pytest_asyncio.fixture
async def browser():
    require_chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield launched
        finally:
            await launched.close()


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


async def signed_in(browser, base: str, token: str, **page_options):
    """A new page on the approval page, signed in with ``token``."""
    page = await browser.new_page(**page_options)
    await page.goto(f"{base}/ui/approvals")
    await page.fill("#token", token)
    await page.click("button:has-text('Sign in')")
    return page


@asynccontextmanager
async def live_service(deps: ServiceDeps) -> AsyncIterator[str]:
    """Serve the app with uvicorn on 127.0.0.1:<free port> in this event loop."""
    port = free_port()
    config = uvicorn.Config(create_app(deps), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.02)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
