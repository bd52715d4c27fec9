"""Workflow inputs that carry the same settings share one SessionSettings object, and
sharing never hands an input settings that differ from its own in any way a workflow can
observe (values, or which fields the caller set)."""

from __future__ import annotations

from temporalio.contrib.pydantic import pydantic_data_converter

from durable_loop.core.config import RuntimeConfig, SessionSettings
from durable_loop.core.contracts import ChildSessionInput, SessionInput, UserMessage
from durable_loop.core.endpoint import LlmEndpoint

CONVERTER = pydantic_data_converter.payload_converter


def settings(**runtime: object) -> SessionSettings:
    return SessionSettings(
        llm=LlmEndpoint(model="m", base_url="http://127.0.0.1:9/v1", llm_options={"seed": 1}),
        runtime=RuntimeConfig.model_validate(runtime),
        fallback_llms=[LlmEndpoint(model="f", base_url="http://127.0.0.1:9/v1")],
    )


def decoded(inp: SessionInput) -> SessionInput:
    """``inp`` as a workflow receives it: encoded by the client, decoded by the worker."""
    payload = CONVERTER.to_payloads([inp])
    (out,) = CONVERTER.from_payloads(payload, [SessionInput])
    assert isinstance(out, SessionInput)
    return out


def test_sessions_decoded_with_equal_settings_share_one_object():
    first = decoded(SessionInput(session_id="a", settings=settings()))
    second = decoded(SessionInput(session_id="b", settings=settings()))
    assert first.settings is second.settings
    assert first.settings == settings()
    assert first.session_id == "a" and second.session_id == "b"


def test_different_settings_are_not_shared():
    plain = decoded(SessionInput(session_id="a", settings=settings()))
    other = decoded(SessionInput(session_id="b", settings=settings(max_turns=3)))
    assert plain.settings is not other.settings
    assert other.settings.runtime.max_turns == 3
    assert plain.settings.runtime.max_turns == RuntimeConfig().max_turns


def test_equal_values_with_other_fields_set_are_not_shared():
    explicit = settings(max_turns=RuntimeConfig().max_turns)
    implicit = settings()
    assert explicit.runtime.model_fields_set != implicit.runtime.model_fields_set
    a = SessionInput(session_id="a", settings=explicit)
    b = SessionInput(session_id="b", settings=implicit)
    assert a.settings is not b.settings
    assert a.settings.runtime.model_fields_set == {"max_turns"}
    assert b.settings.runtime.model_fields_set == set()


def test_child_session_inputs_share_too():
    message = UserMessage(text="hi")
    a = ChildSessionInput(session_id="a", settings=settings(), messages=[message])
    b = SessionInput(session_id="b", settings=settings())
    assert a.settings is b.settings


def test_sharing_does_not_change_the_payload():
    inp = SessionInput(session_id="a", settings=settings())
    unshared = SessionInput.model_construct(session_id="a", settings=settings(), carried=None)
    assert CONVERTER.to_payloads([inp]) == CONVERTER.to_payloads([unshared])
