"""Tool profiles: a named choice of ensembles and tools, resolved to allow/deny lists.

The loop never sees a profile: :func:`apply_profile` writes the resolved lists into a
session's :class:`RuntimeConfig`, which is all the loop consumes.

``profiles.toml``::

    [profiles.readonly]
    ensembles = ["io"]
    exclude_tools = ["write_file"]
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durable_loop.core.config import RuntimeConfig
from durable_loop.core.errors import ConfigError, ErrorCode
from durable_loop.tools.ensembles.descriptors import DescriptorProblem, EnsembleLoadError
from durable_loop.tools.ensembles.model import Ensemble
from durable_loop.tools.ensembles.toml_lines import dotted, key_lines, line_of


class ToolProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    ensembles: list[str] = Field(default_factory=list, description="Allow all their tools")
    tools: list[str] = Field(default_factory=list, description="Allow these tools")
    exclude_ensembles: list[str] = Field(default_factory=list)
    exclude_tools: list[str] = Field(default_factory=list)


class ToolSelection(BaseModel):
    """What a profile resolves to; ``allowlist=None`` means every tool not denied."""

    model_config = ConfigDict(frozen=True)

    allowlist: list[str] | None
    denylist: list[str]


class ProfileError(ConfigError):
    """A profile names ensembles or tools nobody declared (``PROFILE_UNKNOWN_NAME``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.PROFILE_UNKNOWN_NAME)


def resolve_profile(profile: ToolProfile, ensembles: Iterable[Ensemble]) -> ToolSelection:
    """Resolve names against the declared ensembles (disabled tools included: a profile may
    name a tool that this worker has switched off; masking then simply finds nothing)."""
    members = {e.name: e.tool_names() for e in ensembles}
    known_tools = {t for names in members.values() for t in names}
    unknown = [
        f"ensemble {n!r}"
        for n in [*profile.ensembles, *profile.exclude_ensembles]
        if n not in members
    ] + [f"tool {n!r}" for n in [*profile.tools, *profile.exclude_tools] if n not in known_tools]
    if unknown:
        raise ProfileError(f"profile {profile.name!r} names unknown {', '.join(unknown)}")
    allow: list[str] | None = None
    if profile.ensembles or profile.tools:
        allow = [t for e in profile.ensembles for t in members[e]] + list(profile.tools)
    deny = [t for e in profile.exclude_ensembles for t in members[e]] + list(profile.exclude_tools)
    return ToolSelection(
        allowlist=None if allow is None else sorted(set(allow) - set(deny)),
        denylist=sorted(set(deny)),
    )


def apply_profile(runtime: RuntimeConfig, selection: ToolSelection) -> RuntimeConfig:
    """Narrow ``runtime``'s lists by ``selection`` (a profile never widens what is allowed)."""
    allow = selection.allowlist
    if runtime.tool_allowlist is not None:
        allow = [n for n in runtime.tool_allowlist if allow is None or n in allow]
    deny = sorted(set(runtime.tool_denylist) | set(selection.denylist))
    return runtime.model_copy(update={"tool_allowlist": allow, "tool_denylist": deny})


class _ProfilesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profiles: dict[str, dict[str, list[str]]] = Field(default_factory=dict)


def load_profiles(path: str | Path) -> dict[str, ToolProfile]:
    """Read ``[profiles.<name>]`` tables; problems are reported with file, line and field."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        problem = DescriptorProblem(file=str(file), field="(root)", message=f"invalid TOML: {err}")
        raise EnsembleLoadError([problem]) from None
    lines = key_lines(text)
    problems: list[DescriptorProblem] = []
    profiles: dict[str, ToolProfile] = {}
    try:
        raw = _ProfilesFile.model_validate(data).profiles
    except ValidationError as err:
        raw = {}
        for item in err.errors():
            problems.append(
                DescriptorProblem(
                    file=str(file),
                    line=line_of(lines, item["loc"]),
                    field=dotted(item["loc"]),
                    message=item["msg"],
                )
            )
    for name, body in raw.items():
        try:
            profiles[name] = ToolProfile(name=name, **body)
        except ValidationError as err:
            for item in err.errors():
                where = ("profiles", name, *item["loc"])
                problems.append(
                    DescriptorProblem(
                        file=str(file),
                        line=line_of(lines, where),
                        field=dotted(where),
                        message=item["msg"],
                    )
                )
    if problems:
        raise EnsembleLoadError(problems)
    return profiles
