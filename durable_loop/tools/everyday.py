"""Everyday tools: a calculator for arithmetic expressions and a per-session notebook.

The demo offers them (``durable_loop.demo.tools``) and the eval's everyday scenarios use
them (``durable_loop.evals.scenarios_everyday``).

Plain typed functions; ``demo_registry`` turns them into tool specs through
:class:`ToolRegistry`, so their docstrings and signatures are what the model sees.
"""

from __future__ import annotations

import ast
import math
import operator
import threading
from collections.abc import Callable

from pydantic import BaseModel

from durable_loop.core.errors import ErrorCode
from durable_loop.core.registry import ToolContext, ToolFailure, ToolRegistry

Number = int | float
MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 64
MAX_DIGITS = 1000
_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _tidy(value: Number) -> Number:
    """Whole results come back as integers, so the model reads 441, not 441.0."""
    if not isinstance(value, int | float):
        raise ToolFailure(ErrorCode.INVALID_ARGS, "the result is not a real number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolFailure(ErrorCode.INVALID_ARGS, "the result is not a finite number")
        if value.is_integer():
            return int(value)
    return value


def _check_power(base: Number, exponent: Number) -> None:
    if abs(exponent) > MAX_EXPONENT:
        raise ToolFailure(
            ErrorCode.INVALID_ARGS, f"exponents above {MAX_EXPONENT} are not supported"
        )
    if abs(base) > 1 and exponent * math.log10(abs(base)) > MAX_DIGITS:
        raise ToolFailure(
            ErrorCode.INVALID_ARGS, f"results above 10**{MAX_DIGITS} are not supported"
        )


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ToolFailure(ErrorCode.INVALID_ARGS, "booleans are not numbers here")
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _BINARY[type(node.op)](left, right)
    shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    raise ToolFailure(
        ErrorCode.INVALID_ARGS,
        f"{shown!r} is not arithmetic: use numbers, + - * / // % ** and parentheses",
    )


def calculate(expression: str) -> Number:
    """Evaluate an arithmetic expression (numbers, + - * / and parentheses) and return its value.
    * and / bind before + and -, so wrap an earlier step in parentheses: (2 + 3) * 4 adds first.

    The precedence line is for models that write a request in steps ("add 17 and 25, then
    multiply by 3") as one expression in the order the steps were said (docs/evals.md).
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ToolFailure(
            ErrorCode.INVALID_ARGS, f"expressions hold at most {MAX_EXPRESSION_CHARS} characters"
        )
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ToolFailure(
            ErrorCode.INVALID_ARGS, f"cannot read {expression!r} as arithmetic"
        ) from None
    try:
        return _tidy(_evaluate(tree.body))
    except ZeroDivisionError:
        raise ToolFailure(
            ErrorCode.REQUEST_IMPOSSIBLE,
            "division by zero: the result is undefined, no expression can compute it",
        ) from None
    except OverflowError:
        raise ToolFailure(ErrorCode.INVALID_ARGS, "the result is too large") from None


class Note(BaseModel):
    id: int
    text: str


class Notebook:
    """Notes per session, in memory. A retried call (same idempotency key) adds nothing."""

    def __init__(self, max_chars: int = 500) -> None:
        self.max_chars = max_chars
        self._notes: dict[str, list[Note]] = {}
        self._by_key: dict[str, Note] = {}
        self._lock = threading.Lock()

    def notes(self, session_id: str) -> list[Note]:
        with self._lock:
            return list(self._notes.get(session_id, []))

    def note_add(self, text: str, ctx: ToolContext) -> Note:
        """Save a short note for later; returns the stored note with its id."""
        text = text.strip()
        if not text:
            raise ToolFailure(ErrorCode.INVALID_ARGS, "text is empty: write the note's content")
        if len(text) > self.max_chars:
            raise ToolFailure(
                ErrorCode.INVALID_ARGS, f"a note holds at most {self.max_chars} characters"
            )
        with self._lock:
            done = self._by_key.get(ctx.idempotency_key)
            if done is not None:
                return done
            notes = self._notes.setdefault(ctx.session_id, [])
            note = Note(id=len(notes) + 1, text=text)
            notes.append(note)
            self._by_key[ctx.idempotency_key] = note
            return note

    def note_list(self, ctx: ToolContext) -> list[Note]:
        """List every note saved in this session, oldest first."""
        return self.notes(ctx.session_id)


def demo_registry(notebook: Notebook) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(calculate)
    registry.register(notebook.note_add, name="note_add")
    registry.register(notebook.note_list, name="note_list")
    return registry
