"""The pure half of the argument recoveries: requests, replies, pointers."""

from __future__ import annotations

import json

import pytest

from durable_loop.core.argument_repair import (
    repair_kind,
    repair_request,
    repaired_arguments,
    shorten_max_tokens,
    shorten_request,
    shortened_value,
    with_value,
)


def test_shorten_request_carries_only_the_longest_value_and_a_budget_under_the_limit() -> None:
    arguments = json.dumps({"title": "t", "ops": [{"path": "/a", "value": "v" * 300}]})
    messages, pointer, budget = shorten_request(arguments, 200)
    over = len(arguments) - 200
    assert pointer == "/ops/0/value" and 0 < budget < 300 - over
    assert "v" * 300 in (messages[1].content or "") and '"title"' not in (messages[1].content or "")
    assert str(budget) in (messages[1].content or "")


def test_shorten_max_tokens_fits_the_budget_and_never_raises_the_session_cap() -> None:
    assert shorten_max_tokens(316, 768) == 174
    assert shorten_max_tokens(316, 100) == 100
    assert shorten_max_tokens(40, None) == 36


def test_shorten_request_refuses_what_shortening_cannot_fix() -> None:
    with pytest.raises(ValueError):
        shorten_request(json.dumps({"a": "x" * 10, "b": [1] * 200}), 100)
    with pytest.raises(ValueError):
        shorten_request(json.dumps({"n": list(range(200))}), 100)


def test_with_value_replaces_the_string_at_a_pointer() -> None:
    arguments = json.dumps({"ops": [{"value": "long"}], "a/b": "x"})
    assert json.loads(with_value(arguments, "/ops/0/value", "s")) == {
        "ops": [{"value": "s"}],
        "a/b": "x",
    }
    assert json.loads(with_value(arguments, "/a~1b", "y"))["a/b"] == "y"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 2}', {"a": 2}),
        ('```json\n{"a": 2}\n```', {"a": 2}),
        ('Here it is: {"a": 2} — done', {"a": 2}),
    ],
)
def test_repaired_arguments_reads_one_json_object(reply: str, expected: object) -> None:
    text = repaired_arguments(reply)
    assert text is not None and json.loads(text) == expected


@pytest.mark.parametrize("reply", ["I can't help with that.", "[1, 2]", "{broken", None])
def test_repaired_arguments_without_an_object_is_none(reply: str | None) -> None:
    assert repaired_arguments(reply) is None


def test_shortened_value_drops_fences_and_quotes() -> None:
    assert shortened_value('"short"') == "short"
    assert shortened_value("```\nshort\n```") == "short"
    assert shortened_value("  ") is None


def test_repair_request_names_the_schema_arguments_and_error() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    messages = repair_request("add", schema, '{"a": "two"}', "INVALID_ARGS: a is not an integer")
    text = messages[1].content or ""
    assert '"integer"' in text and '{"a": "two"}' in text and "INVALID_ARGS" in text
    assert messages[0].role == "system" and "JSON object only" in (messages[0].content or "")


def test_repair_kind_is_enabled_and_once() -> None:
    both = {"shorten_oversized_arguments", "repair_invalid_arguments"}
    assert repair_kind(["ARGUMENTS_TOO_LARGE"], both, set()) == "shorten_oversized_arguments"
    assert repair_kind(["INVALID_JSON"], both, set()) == "repair_invalid_arguments"
    assert repair_kind(["INVALID_ARGS"], both, {"repair_invalid_arguments"}) is None
    assert repair_kind(["TOOL_ERROR"], both, set()) is None
    assert repair_kind(["INVALID_ARGS"], {"shorten_oversized_arguments"}, set()) is None
