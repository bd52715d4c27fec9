"""The parts of the pip package ``bfcl-eval`` the suite uses, and nothing else of it.

BFCL's declared dependencies are every vendor SDK its model handlers call (and torch for
its memory and web-search categories); its data, schema conversion, checkers, multi-turn
API classes and averaging need seven small packages (the ``bfcl`` extra). ``make bfcl`` installs
``bfcl-eval`` itself with ``--no-deps``. One import of the checker is not used as BFCL
ships it: ``ast_checker`` reads ``underscore_to_dot`` from BFCL's table of models, whose
module imports every handler (and so every SDK). When that table cannot be imported, an
empty one stands in its place; either way the suite adds its own row, ``durable-loop``,
with ``underscore_to_dot=True``: dotted names reach the model with ``_`` (BFCL's option for
APIs that refuse dots) and the checker compares names the same way.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from durable_loop.core.errors import DurableLoopError, ErrorCode

BFCL_VERSION = "2026.3.23"
CHECKER_MODEL = "durable-loop"
"""The model name the checker is given (BFCL looks it up with ``_`` read as ``/``)."""
_MODEL_TABLE = "bfcl_eval.constants.model_config"
INSTALL = f"make bfcl (pip install --no-deps bfcl-eval=={BFCL_VERSION} 'durable-loop[bfcl]')"


class BfclNotInstalled(DurableLoopError):
    show_code = True

    def __init__(self, missing: str) -> None:
        super().__init__(
            ErrorCode.EXTRA_NOT_INSTALLED,
            f"the BFCL suite needs {missing}, which is not installed: {INSTALL}",
        )


@dataclass(frozen=True)
class Bfcl:
    """BFCL's own functions, imported once."""

    load_entries: Callable[[str], list[dict[str, Any]]]
    load_answers: Callable[[str], list[dict[str, Any]]]
    to_openai_tools: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    ast_checker: Callable[..., dict[str, Any]]
    checker_name: Callable[[str], str]
    """The name the checker expects for a function (``.`` as ``_``)."""
    is_call_list: Callable[[object], bool]
    is_empty_output: Callable[[object], bool]
    weighted: Callable[[list[dict[str, Any]]], dict[str, Any]]
    unweighted: Callable[[list[dict[str, Any]]], dict[str, Any]]
    python: object
    call_strings: Callable[[list[dict[str, Any]]], list[str]]
    """``[{name: arguments}]`` as the Python call lines BFCL's multi-turn executor runs."""
    execute_calls: Callable[..., tuple[list[str], dict[str, Any]]]
    """BFCL's multi-turn executor: its API classes, one instance set per model name and
    entry, kept between calls."""
    multi_turn_checker: Callable[..., dict[str, Any]]


def _import(module: str) -> types.ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = err.name or module
        raise BfclNotInstalled("bfcl-eval" if missing == "bfcl_eval" else missing) from None


def _model_table() -> dict[str, Any]:
    try:
        table = importlib.import_module(_MODEL_TABLE)
    except ModuleNotFoundError as err:
        if err.name == "bfcl_eval":
            raise BfclNotInstalled("bfcl-eval") from None
        table = types.ModuleType(_MODEL_TABLE)
        table.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
        sys.modules[_MODEL_TABLE] = table
    mapping: dict[str, Any] = table.MODEL_CONFIG_MAPPING
    mapping.setdefault(
        CHECKER_MODEL, types.SimpleNamespace(underscore_to_dot=True, display_name=CHECKER_MODEL)
    )
    return mapping


@cache
def load_bfcl() -> Bfcl:
    """BFCL's functions, or :class:`BfclNotInstalled` naming what to install."""
    _import("bfcl_eval")
    _model_table()
    utils = _import("bfcl_eval.utils")
    enums = _import("bfcl_eval.constants.enums")
    mappings = _import("bfcl_eval.constants.type_mappings")
    handler_utils = _import("bfcl_eval.model_handler.utils")
    checker = _import("bfcl_eval.eval_checker.ast_eval.ast_checker")
    helper = _import("bfcl_eval.eval_checker.eval_runner_helper")
    multi_turn = _import("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    multi_turn_checker = _import("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    style = enums.ModelStyle.OPENAI_COMPLETIONS

    def to_openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = handler_utils.convert_to_tool(
            functions, mappings.GORILLA_TO_OPENAPI, style
        )
        return tools

    return Bfcl(
        load_entries=utils.load_dataset_entry,
        load_answers=utils.load_ground_truth_entry,
        to_openai_tools=to_openai_tools,
        ast_checker=checker.ast_checker,
        checker_name=lambda name: str(checker.convert_func_name(name, CHECKER_MODEL)),
        is_call_list=utils.is_function_calling_format_output,
        is_empty_output=utils.is_empty_output,
        weighted=helper.calculate_weighted_accuracy,
        unweighted=helper.calculate_unweighted_accuracy,
        python=enums.Language.PYTHON,
        call_strings=handler_utils.convert_to_function_call,
        execute_calls=multi_turn.execute_multi_turn_func_call,
        multi_turn_checker=multi_turn_checker.multi_turn_checker,
    )
