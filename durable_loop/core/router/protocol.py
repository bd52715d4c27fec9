"""The router -> executor protocol: what each step's output must be, and how to read it.

Model output is untrusted text. :func:`parse_router` and :func:`parse_executor` extract
one JSON object (tolerating code fences and surrounding prose), validate it with
jsonschema, and return either a typed value or a :class:`StepFailure` whose message is
quoted back to the model in the single repair prompt. Pure and deterministic: the
workflow imports this module.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from jsonschema import Draft202012Validator
from pydantic import BaseModel, JsonValue

from durable_loop.core.errors import ErrorCode
from durable_loop.core.said_values import (
    DIGIT_GAP,
    DIGITS,
    UNSTATED_FORMATS,
    required_names,
    value_text,
)
from durable_loop.core.tools import ToolSpec

Choice = Literal["call_tool", "clarify", "none"]
FailureCode = Literal[ErrorCode.INVALID_JSON, ErrorCode.SCHEMA_INVALID]
MAX_ERRORS_QUOTED = 3
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


class RouterDecision(BaseModel):
    choice: Choice
    tool: str | None = None
    question: str | None = None


class ExecutorCall(BaseModel):
    tool: str
    args: dict[str, JsonValue]


class StepFailure(BaseModel):
    code: FailureCode
    message: str


class Extracted(BaseModel):
    value: JsonValue
    strict: bool  # the whole output was the JSON value (code fences aside)


def extract_json(text: str) -> Extracted | StepFailure:
    """The JSON object in ``text``: the whole text, else the first balanced ``{...}``."""
    stripped = _FENCE.sub("", text.strip()).strip()
    try:
        return Extracted(value=json.loads(stripped), strict=True)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        return Extracted(value=value, strict=False)
    snippet = " ".join(text.split())[:120]
    return StepFailure(code=ErrorCode.INVALID_JSON, message=f"no JSON object found in: {snippet!r}")


def _schema_errors(schema: dict[str, JsonValue], value: JsonValue) -> str | None:
    errors = sorted(
        Draft202012Validator(schema).iter_errors(value), key=lambda e: list(map(str, e.path))
    )
    if not errors:
        return None
    quoted = []
    for error in errors[:MAX_ERRORS_QUOTED]:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        quoted.append(f"{where}: {error.message}")
    return "; ".join(quoted)


def normalise_tool_name(raw: JsonValue, names: list[str]) -> JsonValue:
    """Map harmless spelling drift (case, spaces, hyphens) onto a known tool name."""
    if not isinstance(raw, str):
        return raw
    key = re.sub(r"[\s\-]+", "_", raw.strip().lower())
    return key if key in names else raw


def router_schema(tool_names: list[str]) -> dict[str, JsonValue]:
    tool_enum: list[JsonValue] = [*tool_names, None]
    return {
        "type": "object",
        "required": ["choice", "tool", "question"],
        "additionalProperties": False,
        "properties": {
            "choice": {"enum": ["call_tool", "clarify", "none"]},
            "tool": {"enum": tool_enum},
            "question": {"type": ["string", "null"], "maxLength": 300},
        },
        "allOf": [
            {
                "if": {"properties": {"choice": {"const": "call_tool"}}},
                "then": {"properties": {"tool": {"type": "string"}}},
            },
            {
                "if": {"properties": {"choice": {"const": "clarify"}}},
                "then": {
                    "properties": {
                        "tool": {"type": "string"},
                        "question": {"type": "string", "minLength": 3},
                    }
                },
            },
        ],
    }


def _route_hint(value: JsonValue, names: list[str]) -> str | None:
    """A plain-words message for the mistakes small models make most (quoted in the repair
    prompt, where a bare jsonschema message like "None is not of type 'string'" is lost)."""
    if not isinstance(value, dict):
        return None
    choice, tool = value.get("choice"), value.get("tool")
    listed = ", ".join(names)
    if isinstance(choice, str) and choice in names:
        return (
            f'"choice" must be call_tool, clarify or none; to use {choice} answer '
            f'{{"choice": "call_tool", "tool": "{choice}", "question": null}}'
        )
    if choice == "call_tool" and tool not in names:
        return f'call_tool needs "tool" to be one of: {listed}. If no tool fits, choose none'
    if choice == "clarify" and tool not in names:
        return (
            'clarify is only for a lookup whose identifier is missing, with "tool" set to '
            f"that lookup ({listed}). For general questions choose none"
        )
    return None


def parse_router(text: str, specs: list[ToolSpec]) -> RouterDecision | StepFailure:
    """Validate a router output; ``clarify`` must name a tool with a required argument
    (clarifying is only for a missing identifier of a lookup)."""
    extracted = extract_json(text)
    if isinstance(extracted, StepFailure):
        return extracted
    value = extracted.value
    names = [s.name for s in specs]
    if isinstance(value, dict) and "tool" in value:
        value = {**value, "tool": normalise_tool_name(value["tool"], names)}
    problem = _route_hint(value, names) or _schema_errors(router_schema(names), value)
    if problem:
        return StepFailure(code=ErrorCode.SCHEMA_INVALID, message=problem)
    decision = RouterDecision.model_validate(value)
    if decision.choice == "clarify":
        spec = next(s for s in specs if s.name == decision.tool)
        if not spec.parameters.get("required"):
            return StepFailure(
                code=ErrorCode.SCHEMA_INVALID,
                message=f"clarify is only for a missing identifier, and {spec.name} needs none: "
                "call the tool or choose none",
            )
    if decision.choice == "none":
        decision = RouterDecision(choice="none")
    return decision


GENERIC_ARGUMENT_WORDS = frozenset({"id", "number", "no", "code", "name", "ref", "reference"})


def _argument_words(argument: str, *, distinctive: bool, letters: bool) -> set[str]:
    """The words of an argument's name. ``distinctive`` keeps those of three letters or
    more that are not generic, so ``tracking_id`` is asked for by "tracking number" as well
    as by "tracking id"; without ``letters`` a one-letter argument (``a``, ``x``) is named by
    no question ("What is a haiku?" does not ask for ``a``)."""
    words = set(argument.lower().split("_"))
    if distinctive:
        return {w for w in words if len(w) >= 3 and w not in GENERIC_ARGUMENT_WORDS}
    return words if letters else {w for w in words if len(w) >= 2}


def _tools_asked(
    question: str, specs: list[ToolSpec], *, distinctive: bool, letters: bool = False
) -> list[str]:
    """The tools one of whose required arguments ``question`` names."""
    words = set(re.findall(r"[a-z0-9]+", question.lower()))
    named = [
        (s.name, _argument_words(arg, distinctive=distinctive, letters=letters))
        for s in specs
        for arg in required_names(s.parameters)
    ]
    return list(dict.fromkeys(name for name, arg in named if arg and arg <= words))


def _clarify_without_tool(text: str, specs: list[ToolSpec]) -> dict[str, JsonValue] | None:
    """The router output's object when it is a ``clarify`` naming none of ``specs``."""
    extracted = extract_json(text)
    if isinstance(extracted, StepFailure) or not isinstance(extracted.value, dict):
        return None
    value = extracted.value
    if value.get("choice") != "clarify" or value.get("tool") in [s.name for s in specs]:
        return None
    return value


def clarify_of_named_argument(
    text: str, specs: list[ToolSpec], *, distinctive: bool = False, letters: bool = False
) -> RouterDecision | None:
    """A ``clarify`` without a tool whose question asks for exactly one tool's required
    argument, read as a clarify for that tool; else None.

    A small router asked whether a lookup is possible writes ``{"choice": "clarify",
    "tool": null, "question": "What is the flight number?"}``: the right choice, its tool
    left out. The question names the argument (every word of ``flight_number``, or with
    ``distinctive`` every word but the generic id/number/code ones), which identifies the
    tool as well as the model could have; without a match the output stays invalid and
    goes to the repair prompt. ``letters`` is the rule as first shipped (patch
    ``router-clarify-names-its-argument`` alone), under which the article "a" named an
    argument ``a``.
    """
    value = _clarify_without_tool(text, specs)
    question = None if value is None else value.get("question")
    if value is None or not isinstance(question, str):
        return None
    asked = _tools_asked(question, specs, distinctive=distinctive, letters=letters)
    if len(asked) != 1:
        return None
    decision = parse_router(json.dumps({**value, "tool": asked[0]}), specs)
    return decision if isinstance(decision, RouterDecision) else None


def is_toolless_clarify(text: str, specs: list[ToolSpec]) -> bool:
    """A ``clarify`` that names no tool and whose question names no tool's required
    argument, even by its distinctive words: there is no lookup to clarify, which the
    protocol calls ``none`` (what the repair prompt would ask the model to answer)."""
    value = _clarify_without_tool(text, specs)
    if value is None:
        return False
    question = value.get("question")
    return not _tools_asked(question if isinstance(question, str) else "", specs, distinctive=True)


def executor_schema(spec: ToolSpec) -> dict[str, JsonValue]:
    """The executor's envelope; ``args`` is then checked against the tool's own schema
    (kept separate so its ``$ref``s resolve against its own root)."""
    return {
        "type": "object",
        "required": ["tool", "args"],
        "additionalProperties": False,
        "properties": {"tool": {"const": spec.name}, "args": {"type": "object"}},
    }


def parse_executor(
    text: str, spec: ToolSpec, *, bare_args: bool = False
) -> ExecutorCall | StepFailure:
    """The executor's call; with ``bare_args`` an object holding only the arguments
    (``{"tracking_id": "…"}``, the envelope left out) is read as ``{"tool", "args"}``."""
    extracted = extract_json(text)
    if isinstance(extracted, StepFailure):
        return extracted
    value = extracted.value
    if bare_args and isinstance(value, dict) and not {"tool", "args"} & value.keys():
        value = {"tool": spec.name, "args": value}
    if isinstance(value, dict) and "tool" in value:
        value = {**value, "tool": normalise_tool_name(value["tool"], [spec.name])}
    problem = _schema_errors(executor_schema(spec), value)
    if problem is None and isinstance(value, dict):
        inner = _schema_errors(spec.parameters, value["args"])
        problem = None if inner is None else f"args: {inner}"
    if problem:
        return StepFailure(code=ErrorCode.SCHEMA_INVALID, message=problem)
    return ExecutorCall.model_validate(value)


def is_strict_json(text: str) -> bool:
    extracted = extract_json(text)
    return isinstance(extracted, Extracted) and extracted.strict


_SQUASH = re.compile(r"[^a-z0-9]")


def ungrounded_arguments(call: ExecutorCall, spec: ToolSpec, said: list[str]) -> list[str]:
    """Required arguments whose value holds digits the user never wrote: an invented
    identifier or amount (flight number, order id, sum of money).

    A small model asked to fill ``flight_number`` for "is my flight on time?" writes a
    plausible one rather than refusing; digits cannot come from a nickname or a typo fix, so
    a required value whose digit runs appear in none of ``said`` (the message and the
    conversation shown to the executor) was guessed. Dates and times are left out: "tomorrow"
    legitimately becomes digits.
    """
    required = required_names(spec.parameters)
    properties = spec.parameters.get("properties")
    props = properties if isinstance(properties, dict) else {}
    heard = " ".join(DIGIT_GAP.sub("", text) for text in said)
    missing: list[str] = []
    for name in required:
        schema = props.get(name)
        if isinstance(schema, dict) and schema.get("format") in UNSTATED_FORMATS:
            continue
        runs = DIGITS.findall(value_text(call.args.get(name)))
        if runs and not all(run in heard for run in runs):
            missing.append(name)
    return missing


def stated_arguments(call: ExecutorCall, spec: ToolSpec, said: list[str]) -> bool:
    """Whether every required argument's value was stated by the user: the value, spaces and
    punctuation aside, appears in ``said``, and so does each of its digit runs whole.

    The converse of :func:`ungrounded_arguments`, and stricter: a router that asks for an
    identifier the message already gives ("Is flight BA 117 on time?") is overruled only
    when the executor fills every required value from the user's own words, never from a
    nickname it expanded or a value it guessed.
    """
    required = required_names(spec.parameters)
    if not required:
        return False
    heard = " ".join(DIGIT_GAP.sub("", text) for text in said).lower()
    heard_runs = set(DIGITS.findall(heard))
    squashed_heard = _SQUASH.sub("", heard)
    for name in required:
        value = DIGIT_GAP.sub("", value_text(call.args.get(name)).lower())
        squashed = _SQUASH.sub("", value)
        if not squashed or squashed not in squashed_heard:
            return False
        if not set(DIGITS.findall(value)) <= heard_runs:
            return False
    return True


def clarify_question(spec: ToolSpec, missing: list[str]) -> str:
    """The question asked instead of calling ``spec`` with invented ``missing`` values."""
    properties = spec.parameters.get("properties")
    props = properties if isinstance(properties, dict) else {}
    asked: list[str] = []
    for name in missing:
        schema = props.get(name)
        hint = schema.get("description") if isinstance(schema, dict) else None
        label = name.replace("_", " ")
        asked.append(f"{label} ({hint})" if isinstance(hint, str) and hint else label)
    return f"To use {spec.name} I need the {' and the '.join(asked)}. What is it?"
