"""The demo tools: a safe calculator and an idempotent per-session notebook."""

from __future__ import annotations

import pytest

from durable_loop.core.registry import ToolContext, ToolFailure
from durable_loop.demo.tools import Notebook, calculate, demo_registry


def ctx(session_id: str = "s1", key: str = "k1") -> ToolContext:
    return ToolContext(
        session_id=session_id,
        workflow_id=f"session-{session_id}",
        call_id="c1",
        turn=1,
        attempt=1,
        idempotency_key=key,
    )


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("23 * 19 + 4", 441),
        ("(2 + 3) * 4", 20),
        ("7 / 2", 3.5),
        ("8 / 2", 4),
        ("-3 + +2", -1),
        ("2 ** 10", 1024),
        ("17 // 5 + 17 % 5", 5),
        ("0.1 * 3", 0.30000000000000004),
    ],
)
def test_calculate(expression: str, value: float):
    result = calculate(expression)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("x + 1", "'x' is not arithmetic"),
        ("__import__('os').getcwd()", "is not arithmetic"),
        ("True + 1", "booleans are not numbers"),
        ("2 ** 100", "exponents above 64"),
        ("(((9 ** 64) ** 64) ** 64)", "results above 10**1000"),
        ("(-8) ** (1 / 3)", "not a real number"),
        ("1e308 * 10", "not a finite number"),
        ("2 +", "cannot read '2 +' as arithmetic"),
        ("1" * 201, "at most 200 characters"),
    ],
)
def test_calculate_refuses_with_a_coded_failure(expression: str, message: str):
    with pytest.raises(ToolFailure) as caught:
        calculate(expression)
    assert caught.value.code == "INVALID_ARGS"
    assert message in caught.value.message


def test_a_division_by_zero_has_no_result_rather_than_a_bad_argument():
    """No corrected expression divides by zero: REQUEST_IMPOSSIBLE, which neither the
    argument repair nor the error retry sends back to the model."""
    with pytest.raises(ToolFailure) as caught:
        calculate("10 / (5 - 5)")
    assert caught.value.code == "REQUEST_IMPOSSIBLE"
    assert "division by zero" in caught.value.message


def test_notebook_is_per_session_and_idempotent_per_call():
    book = Notebook()
    first = book.note_add("  23 * 19 + 4 = 441 ", ctx(key="a"))
    assert (first.id, first.text) == (1, "23 * 19 + 4 = 441")
    assert book.note_add("23 * 19 + 4 = 441", ctx(key="a")) == first, "a retry adds nothing"
    second = book.note_add("buy milk", ctx(key="b"))
    assert second.id == 2
    assert book.note_list(ctx()) == [first, second]
    assert book.note_list(ctx(session_id="s2")) == []


@pytest.mark.parametrize(
    ("text", "message"), [("   ", "text is empty"), ("x" * 501, "at most 500")]
)
def test_notebook_refuses_bad_notes(text: str, message: str):
    with pytest.raises(ToolFailure, match=message) as caught:
        Notebook().note_add(text, ctx())
    assert caught.value.code == "INVALID_ARGS"


def test_registry_exposes_typed_schemas():
    registry = demo_registry(Notebook())
    specs = {spec.name: spec for spec in registry.specs()}
    assert list(specs) == ["calculate", "note_add", "note_list"]
    assert specs["calculate"].parameters == {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
        "additionalProperties": False,
    }
    assert specs["note_list"].parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert specs["note_add"].description.startswith("Save a short note")
    assert registry.get("note_add").takes_context
