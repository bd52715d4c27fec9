"""How one LLM request asks for a final answer that fits the output schema.

* ``native``: the provider constrains the reply itself. OpenAI-compatible endpoints get
  ``response_format: {type: json_schema, json_schema: {name, schema, strict: false}}``
  (strict mode accepts only a subset of JSON Schema, so the loop validates instead);
  Gemini gets ``generationConfig.responseMimeType: application/json`` with
  ``responseJsonSchema`` (full JSON Schema, unlike the OpenAPI subset of
  ``responseSchema``).
* ``tool``: a ``final_answer`` tool whose parameters are the schema, offered beside the
  real tools with ``tool_choice`` required (the model either calls a real tool or answers
  through ``final_answer``; forcing ``final_answer`` itself on every turn would stop it
  calling real tools). Without real tools (or where the request must not call one)
  ``final_answer`` is forced. The LLM activity turns that call into the reply's text
  (:func:`final_answer_from_call`), so the transcript holds a plain JSON answer.

Anthropic has no ``response_format``: it always uses the tool. Gemini rejects a response
schema beside function declarations on several models, so it uses the tool whenever the
request carries tools, and so does a model whose catalog entry says its server cannot take
both (``schema_beside_tools=False``: llama.cpp answers HTTP 500). An endpoint's
``structured_output`` setting overrides the choice (``tool`` for OpenAI-compatible servers
without ``json_schema`` support).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import JsonValue

from durable_loop.core.canonical_json import canonical_dumps, strict_loads
from durable_loop.core.messages import Message
from durable_loop.core.tools import ToolSpec
from durable_loop.core.typed_output.schema import OutputSchema

OutputMode: TypeAlias = Literal["native", "tool"]
FINAL_ANSWER_TOOL = "final_answer"
WRAPPED_KEY = "value"
FINAL_ANSWER_DESCRIPTION = (
    "Give your final answer with this tool once you have everything you need. Its "
    "arguments are the answer; call it alone, not beside other tools."
)
TOOL_ONLY_PROVIDERS = frozenset({"anthropic"})
ToolChoice: TypeAlias = str | dict[str, JsonValue] | None


def output_mode(
    provider: str,
    preferred: OutputMode | None,
    *,
    has_tools: bool,
    schema_beside_tools: bool = True,
) -> OutputMode:
    if provider in TOOL_ONLY_PROVIDERS:
        return "tool"
    if preferred is not None:
        return preferred
    if has_tools and (provider == "gemini" or not schema_beside_tools):
        return "tool"
    return "native"


def _is_object_schema(schema: OutputSchema) -> bool:
    return schema.get("type") == "object"


def final_answer_parameters(schema: OutputSchema) -> dict[str, JsonValue]:
    """Tool parameters must be an object: any other schema is wrapped as ``{value: ...}``."""
    if _is_object_schema(schema):
        return schema
    return {"type": "object", "properties": {WRAPPED_KEY: schema}, "required": [WRAPPED_KEY]}


def _forced() -> dict[str, JsonValue]:
    return {"type": "function", "function": {"name": FINAL_ANSWER_TOOL}}


def shape_for_output(
    provider: str,
    preferred: OutputMode | None,
    schema: OutputSchema,
    *,
    tools: list[ToolSpec],
    tool_choice: ToolChoice,
    options: dict[str, JsonValue],
    schema_beside_tools: bool = True,
) -> tuple[list[ToolSpec], ToolChoice, dict[str, JsonValue]]:
    """The request's tools, tool_choice and options once it asks for a typed answer;
    ``schema_beside_tools=False`` (the model's catalog entry) uses the tool whenever
    tools are offered."""
    mode = output_mode(
        provider, preferred, has_tools=bool(tools), schema_beside_tools=schema_beside_tools
    )
    if mode == "native":
        options = dict(options)
        if provider == "gemini":
            generation = options.get("generationConfig")
            options["generationConfig"] = {
                **(generation if isinstance(generation, dict) else {}),
                "responseMimeType": "application/json",
                "responseJsonSchema": schema,
            }
        else:
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": FINAL_ANSWER_TOOL, "schema": schema, "strict": False},
            }
        return tools, tool_choice, options
    final = ToolSpec(
        name=FINAL_ANSWER_TOOL,
        description=FINAL_ANSWER_DESCRIPTION,
        parameters=final_answer_parameters(schema),
    )
    real = [t for t in tools if t.name != FINAL_ANSWER_TOOL]
    choice: ToolChoice = "required" if real and tool_choice != "none" else _forced()
    return [*real, final], choice, options


def final_answer_from_call(message: Message, schema: OutputSchema) -> Message:
    """A reply that calls ``final_answer``: alone, its arguments become the reply's text
    (unwrapped from ``{value: ...}`` for a non-object schema); beside real tool calls it
    is dropped and the real calls run (the model answers again after their results)."""
    finals = [c for c in message.tool_calls if c.name == FINAL_ANSWER_TOOL]
    if not finals:
        return message
    others = [c for c in message.tool_calls if c.name != FINAL_ANSWER_TOOL]
    if others:
        return message.model_copy(update={"tool_calls": others})
    text = finals[0].arguments
    if not _is_object_schema(schema):
        try:
            arguments = strict_loads(text)
        except (ValueError, RecursionError):
            arguments = None
        if isinstance(arguments, dict) and WRAPPED_KEY in arguments:
            text = canonical_dumps(arguments[WRAPPED_KEY])
    return message.model_copy(update={"content": text, "tool_calls": []})
