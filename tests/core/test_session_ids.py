from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from durable_loop.core.errors import ErrorCode
from durable_loop.core.session_ids import (
    SESSION_ID_MAX_CHARS,
    InvalidSessionId,
    SessionIdText,
    check_session_id,
    is_session_id,
)


@pytest.mark.parametrize(
    "good", ["a", "chat-1a2b", "team+alice@example.com", "tenant:42.x_y~z", "café", "%41", "..."]
)
def test_ids_in_the_rule(good):
    assert is_session_id(good) and check_session_id(good) == good


@pytest.mark.parametrize(
    "bad",
    ["", " ", "a b", "a\nb", "a\x00b", "a\u202eb", "a\u200bb", "a/b", ".", "..", "x" * 201],
)
def test_ids_outside_the_rule_are_refused_with_a_code(bad):
    assert not is_session_id(bad)
    with pytest.raises(InvalidSessionId) as refused:
        check_session_id(bad)
    assert refused.value.code is ErrorCode.INVALID_SESSION_ID
    assert "\n" not in str(refused.value) and "\u202e" not in str(refused.value)


def test_the_same_rule_validates_a_model_field():
    class Body(BaseModel):
        session_id: SessionIdText

    assert Body(session_id="x" * SESSION_ID_MAX_CHARS).session_id == "x" * SESSION_ID_MAX_CHARS
    with pytest.raises(ValidationError, match="printable"):
        Body(session_id="a b")
