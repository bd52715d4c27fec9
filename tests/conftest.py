"""Shared test helpers. Fixtures come from the durable_loop pytest plugin, except ``ws``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest_asyncio

from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.endpoint import LlmEndpoint
from durable_loop.core.retry import RetrySettings
from durable_loop.store import StoreConfig
from durable_loop.store.workspace import WorkspaceStore, open_workspace_store
from durable_loop.testing import ScriptedLLM

FAST_RETRY = RetrySettings(initial_interval_s=0.1, maximum_interval_s=1.0, maximum_attempts=3)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def settings_for(
    llm: ScriptedLLM,
    model: str,
    *,
    runtime: RuntimeConfig | None = None,
    api_key_env: str | None = None,
    timeout_s: float = 10.0,
    retry: RetrySettings = FAST_RETRY,
    system_prompt: str | None = None,
) -> SessionSettings:
    return SessionSettings(
        llm=LlmEndpoint(
            model=model,
            base_url=llm.base_url,
            api_key_env=api_key_env,
            timeout_s=timeout_s,
            retry=retry,
        ),
        runtime=runtime or RuntimeConfig(),
        system_prompt=system_prompt,
    )


@pytest_asyncio.fixture
async def ws(store_url: str) -> AsyncIterator[WorkspaceStore]:
    """A workspace store on the test's database (the one ``loop_worker`` uses)."""
    store = open_workspace_store(StoreConfig(url=store_url))
    yield store
    await store.close()
