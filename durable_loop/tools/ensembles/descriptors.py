"""Ensembles from TOML descriptor files: one ensemble file plus one file per tool.

``io.toml``::

    [ensemble]
    name = "io"
    enabled = true

    [defaults]
    timeout_s = 30
    [defaults.retry]
    maximum_attempts = 3

    [[tools]]
    source = "tools/read_file.toml"

``tools/read_file.toml``::

    [tool]
    name = "read_file"
    description = "Read a text file"
    callable = "myapp.files:read_file"
    dedupe = true

    [arguments]
    type = "object"
    required = ["path"]
    [arguments.properties.path]
    type = "string"

Loading checks everything before refusing anything: the TOML syntax, the descriptor
fields, every argument schema against the JSON Schema meta-schema, the import path of each
enabled tool, and name clashes. :class:`EnsembleLoadError` then lists every problem with
its file, line and field.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.core.registry import Reconcile, ToolFunction
from durable_loop.core.retry import RetrySettings
from durable_loop.core.sub_agent_config import SubAgentConfig
from durable_loop.core.tools import ToolEffect, ToolSpec, check_tool_name
from durable_loop.tools.ensembles.model import Ensemble, EnsembleDefaults
from durable_loop.tools.ensembles.toml_lines import KeyPath, PathPart, dotted, key_lines, line_of

_TOML_LINE = re.compile(r"at line (\d+)")


class DescriptorProblem(BaseModel):
    file: str
    line: int | None = None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.field}: {self.message}"


class EnsembleLoadError(ConfigError):
    """Every problem found while loading descriptors (code ``DESCRIPTOR_INVALID``)."""

    def __init__(self, problems: Sequence[DescriptorProblem]) -> None:
        self.problems = list(problems)
        listing = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(
            f"{len(self.problems)} problem(s) in tool descriptors\n{listing}",
            code=ErrorCode.DESCRIPTOR_INVALID,
        )


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EnsembleHeader(_Strict):
    name: str
    enabled: bool = True
    description: str = ""


class ToolSource(_Strict):
    source: str = Field(min_length=1)
    enabled: bool | None = Field(default=None, description="Overrides the tool file's flag")


class EnsembleFile(_Strict):
    ensemble: EnsembleHeader
    defaults: EnsembleDefaults = EnsembleDefaults()
    tools: list[ToolSource] = Field(default_factory=list)
    sub_agents: list[SubAgentConfig] = Field(
        default_factory=list, description="Agents the model can delegate to (docs/sub-agents.md)"
    )


class ToolHeader(_Strict):
    name: str
    description: str = ""
    enabled: bool = True
    callable: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    timeout_s: float | None = Field(default=None, gt=0)
    retry: RetrySettings | None = None
    dedupe: bool | None = None
    requires_approval: bool | None = None
    effect: ToolEffect | None = None
    reconcile: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
        description='With effect = "once": module:function asked whether a call whose '
        "attempt died inside the body took effect",
    )
    local: bool | None = None
    long_running: bool | None = None
    task_queue: str | None = None
    heartbeat_timeout_s: float | None = Field(default=None, gt=0)


def _empty_arguments() -> dict[str, JsonValue]:
    return {"type": "object", "properties": {}}


class ToolFile(_Strict):
    tool: ToolHeader
    arguments: dict[str, JsonValue] = Field(default_factory=_empty_arguments)


class _Problems:
    """Collects problems for one file, resolving each field path to a line."""

    def __init__(self, out: list[DescriptorProblem], path: Path, text: str = "") -> None:
        self.out = out
        self.file = str(path)
        self.lines = key_lines(text) if text else {}
        self.reported = 0

    def add(self, where: Sequence[PathPart], message: str, line: int | None = None) -> None:
        self.reported += 1
        self.out.append(
            DescriptorProblem(
                file=self.file,
                line=line if line is not None else line_of(self.lines, where),
                field=dotted(where),
                message=message,
            )
        )

    def pydantic(self, err: ValidationError, skip: set[KeyPath] | None = None) -> None:
        """Report validation errors; ``skip`` holds paths another check already reported.

        Errors of a :class:`ToolSpec` built from ``[tool]`` come without the table name.
        """
        for item in err.errors():
            loc = tuple(item["loc"])
            if skip and loc in skip:
                continue
            if err.title == ToolSpec.__name__:
                loc = ("tool", *loc)
            self.add(loc, item["msg"])


def _read_toml(
    path: Path, problems: _Problems, field: KeyPath
) -> tuple[str, dict[str, object]] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        problems.add(field, f"cannot read {path}: {err.strerror or err}")
        return None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = _TOML_LINE.search(str(err))
        own = _Problems(problems.out, path)
        own.add((), f"invalid TOML: {err}", line=int(match.group(1)) if match else None)
        return None


def schema_problems(schema: dict[str, JsonValue]) -> list[tuple[KeyPath, str]]:
    """Every way ``schema`` fails the JSON Schema 2020-12 meta-schema or the tool rules."""
    found: list[tuple[KeyPath, str]] = []
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    for error in sorted(meta.iter_errors(schema), key=lambda e: list(map(str, e.absolute_path))):
        found.append((tuple(error.absolute_path), error.message))
    if schema.get("type") != "object":
        found.append((("type",), 'the root of an argument schema must have type = "object"'))
    return found


def import_callable(path: str) -> ToolFunction:
    """``package.module:function`` (or ``module:Class.method``) -> the callable."""
    module_name, _, attr_path = path.partition(":")
    module = importlib.import_module(module_name)
    target: object = module
    for attr in attr_path.split("."):
        target = getattr(target, attr)
    if not callable(target):
        raise TypeError(f"{path} is not callable")
    return target


class LoadedTool(NamedTuple):
    spec: ToolSpec
    fn: ToolFunction | None
    enabled: bool
    reconcile: Reconcile | None = None


def _load_tool(
    path: Path, problems: _Problems, field: KeyPath, enabled_override: bool | None
) -> LoadedTool | None:
    loaded = _read_toml(path, problems, field)
    if loaded is None:
        return None
    text, data = loaded
    own = _Problems(problems.out, path, text)
    arguments = data.get("arguments")
    if isinstance(arguments, dict):
        for where, message in schema_problems(arguments):
            own.add(("arguments", *where), f"invalid argument schema: {message}")
    header_data = data.get("tool")
    name = header_data.get("name") if isinstance(header_data, dict) else None
    if isinstance(name, str):
        try:
            check_tool_name(name)
        except ValueError as err:
            own.add(("tool", "name"), str(err))
    try:
        descriptor = ToolFile.model_validate(data)
        header = descriptor.tool
        spec = ToolSpec(
            name=header.name,
            description=header.description,
            parameters=descriptor.arguments,
            **header.model_dump(
                exclude={"name", "description", "enabled", "callable", "reconcile"},
                exclude_none=True,
            ),
        )
    except ValidationError as err:
        own.pydantic(err, skip={("name",)})
        return None
    if header.reconcile is not None and header.effect != "once":
        own.add(("tool", "reconcile"), 'reconcile goes with effect = "once"')
    if own.reported:
        return None
    enabled = header.enabled if enabled_override is None else enabled_override
    fn: ToolFunction | None = None
    reconcile: Reconcile | None = None
    if enabled:
        for key, target in (("callable", header.callable), ("reconcile", header.reconcile)):
            if target is None:
                continue
            try:
                found = import_callable(target)
            except (ImportError, AttributeError, TypeError, ValueError) as err:
                own.add(("tool", key), f"cannot import {target!r}: {err}")
                return None
            if key == "callable":
                fn = found
            else:
                reconcile = found
    return LoadedTool(spec, fn, enabled, reconcile)


def _explicit(spec: ToolSpec) -> set[str]:
    return {k for k in spec.model_fields_set if getattr(spec, k) is not None}


def _load_one(path: Path, out: list[DescriptorProblem]) -> Ensemble | None:
    top = _Problems(out, path)
    loaded = _read_toml(path, top, ())
    if loaded is None:
        return None
    text, data = loaded
    problems = _Problems(out, path, text)
    try:
        descriptor = EnsembleFile.model_validate(data)
    except ValidationError as err:
        problems.pydantic(err)
        return None
    header = descriptor.ensemble
    try:
        ensemble = Ensemble(
            header.name,
            enabled=header.enabled,
            description=header.description,
            defaults=descriptor.defaults,
        )
    except ValueError as err:
        problems.add(("ensemble", "name"), str(err))
        return None
    for index, source in enumerate(descriptor.tools):
        field: KeyPath = ("tools", index, "source")
        override = False if not ensemble.enabled else source.enabled
        tool = _load_tool(path.parent / source.source, problems, field, override)
        if tool is None:
            continue
        spec, fn, enabled, reconcile = tool
        if spec.name in ensemble.tool_names():
            problems.add(field, f"tool {spec.name!r} is declared twice in this ensemble")
            continue
        ensemble.add(
            spec,
            fn or _unavailable(spec.name),
            enabled=enabled,
            explicit=_explicit(spec),
            reconcile=reconcile,
        )
    for index, config in enumerate(descriptor.sub_agents):
        field = ("sub_agents", index, "name")
        if config.name in config.tools:
            problems.add(field, f"sub-agent {config.name!r} lists itself among its tools")
            continue
        try:
            ensemble.add_sub_agent(config)
        except ValueError as err:
            problems.add(field, str(err))
    return ensemble


def _unavailable(name: str) -> ToolFunction:
    def disabled(**_: object) -> None:
        raise RuntimeError(f"tool {name!r} is disabled")

    return disabled


def load_ensembles(paths: Iterable[str | Path]) -> list[Ensemble]:
    """Load ensemble files; raise :class:`EnsembleLoadError` listing every problem found."""
    problems: list[DescriptorProblem] = []
    ensembles: list[Ensemble] = []
    owners: dict[str, str] = {}
    for raw in paths:
        path = Path(raw)
        ensemble = _load_one(path, problems)
        if ensemble is None:
            continue
        if any(e.name == ensemble.name for e in ensembles):
            _Problems(problems, path).add(("ensemble", "name"), f"{ensemble.name!r} twice")
            continue
        declared = [s.name for s in ensemble.specs()]
        for name in declared + (ensemble.sub_agent_names() if ensemble.enabled else []):
            if name in owners:
                _Problems(problems, path).add(
                    ("tools",), f"tool {name!r} is also declared by {owners[name]!r}"
                )
            owners[name] = ensemble.name
        ensembles.append(ensemble)
    if problems:
        raise EnsembleLoadError(problems)
    return ensembles


def load_ensemble(path: str | Path) -> Ensemble:
    return load_ensembles([path])[0]


def load_ensemble_dir(directory: str | Path) -> list[Ensemble]:
    """Every ``*.toml`` directly in ``directory`` is an ensemble file (tool files live below)."""
    return load_ensembles(sorted(Path(directory).glob("*.toml")))
