"""The router pipeline's request options (the workflow and ``route-bench`` send the same)."""

from __future__ import annotations

from durable_loop.core.config import RouterConfig
from durable_loop.core.router.options import answer_options, step_options


def test_the_router_settings_win_over_the_sessions_request_overrides() -> None:
    router = RouterConfig(temperature=0.0, max_tokens=64, json_mode=True)
    overrides = {"top_p": 0.5, "temperature": 0.9, "seed": 7}
    assert step_options(router, overrides) == {
        "top_p": 0.5,
        "temperature": 0.0,
        "seed": 7,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
    }
    assert "response_format" not in answer_options(router, overrides)
    assert answer_options(router, overrides)["top_p"] == 0.5


def test_unset_router_settings_leave_the_overrides() -> None:
    router = RouterConfig(temperature=None, max_tokens=None)
    assert step_options(router, {"temperature": 0.9}) == {"temperature": 0.9}
